import { useEffect, useState } from 'preact/hooks';
import { api } from '../../api';
import { Status, useAction } from '../../loading';
import { navigate } from '../../navigation';
import type { Comparison, Suite, WorkflowChoice, WorkflowVersion } from './eval-types';
import { OutputVariableField, SamplesField, SuiteField, WorkflowField } from './form-fields';
import { useOutputVariables, useVersions } from './workflow-choices';

function VersionField({
  label,
  name,
  versions,
  value,
  set,
}: {
  label: string;
  name: string;
  versions: WorkflowVersion[];
  value: string;
  set: (value: string) => void;
}) {
  return (
    <label>
      {label}
      <select name={name} required value={value} onChange={(e) => set(e.currentTarget.value)}>
        <option value="">choose a version</option>
        {versions.map((v) => (
          <option value={String(v.version)}>version {v.version}</option>
        ))}
      </select>
    </label>
  );
}

/** POST /api/evals/compare/: two versions of a workflow on a suite's same first rows; opens the comparison's page. */
export function CompareForm({ suites, workflows }: { suites: Suite[]; workflows: WorkflowChoice[] }) {
  const [suiteId, setSuiteId] = useState('');
  const [workflowId, setWorkflowId] = useState('');
  const [versionA, setVersionA] = useState('');
  const [versionB, setVersionB] = useState('');
  const [variable, setVariable] = useState('');
  const [samples, setSamples] = useState('10');
  const versions = useVersions(workflowId);
  const variables = useOutputVariables(workflowId);
  const { act, busy, error } = useAction();
  // The usual question: the newest version (B) against the one before it (A).
  useEffect(() => {
    setVersionB(versions.data?.[0] ? String(versions.data[0].version) : '');
    setVersionA(versions.data?.[1] ? String(versions.data[1].version) : '');
  }, [versions.data]);
  useEffect(() => setVariable(''), [workflowId]);

  const compare = () =>
    act(async () => {
      const comparison = await api<Comparison>('/evals/compare/', {
        method: 'POST',
        body: {
          suite: suiteId,
          workflow_id: workflowId,
          versions: [Number(versionA), Number(versionB)],
          ...(variable ? { output_variable: variable } : {}),
          num_samples: Number(samples),
        },
      });
      navigate(`/evals/compare/${encodeURIComponent(comparison.id)}`);
    });

  return (
    <form
      class="eval-form"
      aria-labelledby="compare-title"
      onSubmit={(event) => {
        event.preventDefault();
        void compare();
      }}
    >
      <h2 id="compare-title">Compare two versions</h2>
      <SuiteField suites={suites} value={suiteId} set={setSuiteId} />
      <WorkflowField workflows={workflows} value={workflowId} set={setWorkflowId} />
      <VersionField
        label="Version A"
        name="version_a"
        versions={versions.data ?? []}
        value={versionA}
        set={setVersionA}
      />
      <VersionField
        label="Version B"
        name="version_b"
        versions={versions.data ?? []}
        value={versionB}
        set={setVersionB}
      />
      <OutputVariableField variables={variables.data} value={variable} set={setVariable} optional />
      <SamplesField value={samples} set={setSamples} />
      <button type="submit" disabled={busy}>
        Start comparison
      </button>
      <Status error={error ?? versions.error ?? variables.error} />
    </form>
  );
}

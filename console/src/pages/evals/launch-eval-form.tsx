import { useEffect, useState } from 'preact/hooks';
import { api } from '../../api';
import { Status, useAction } from '../../loading';
import { navigate } from '../../navigation';
import type { EvalRun, Suite, WorkflowChoice } from './eval-types';
import { OutputVariableField, SamplesField, SuiteField, WorkflowField } from './form-fields';
import { useOutputVariables } from './workflow-choices';

/** POST /api/evals/launch/: a suite's first rows on a workflow's current version; opens the new run's page. */
export function LaunchEvalForm({ suites, workflows }: { suites: Suite[]; workflows: WorkflowChoice[] }) {
  const [suiteId, setSuiteId] = useState('');
  const [workflowId, setWorkflowId] = useState('');
  const [variable, setVariable] = useState('');
  const [samples, setSamples] = useState('10');
  const variables = useOutputVariables(workflowId);
  const { act, busy, error } = useAction();
  // A workflow with one output variable has nothing to choose.
  useEffect(
    () => setVariable(variables.data?.length === 1 ? (variables.data[0]?.prefixed_variable ?? '') : ''),
    [variables.data],
  );

  const launch = () =>
    act(async () => {
      const run = await api<EvalRun>('/evals/launch/', {
        method: 'POST',
        body: { eval_name: suiteId, workflow_id: workflowId, output_variable: variable, num_samples: Number(samples) },
      });
      navigate(`/evals/runs/${encodeURIComponent(run.run_id)}`);
    });

  return (
    <form
      class="eval-form"
      aria-labelledby="launch-title"
      onSubmit={(event) => {
        event.preventDefault();
        void launch();
      }}
    >
      <h2 id="launch-title">Launch an eval</h2>
      <SuiteField suites={suites} value={suiteId} set={setSuiteId} />
      <WorkflowField workflows={workflows} value={workflowId} set={setWorkflowId} />
      <OutputVariableField variables={variables.data} value={variable} set={setVariable} />
      <SamplesField value={samples} set={setSamples} />
      <button type="submit" disabled={busy}>
        Launch eval
      </button>
      <Status error={error ?? variables.error} />
    </form>
  );
}

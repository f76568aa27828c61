import type { OutputVariable, Suite, WorkflowChoice } from './eval-types';

/** Most rows one eval run scores (the API's MAX_EVAL_SAMPLES). */
const MOST_SAMPLES = 10_000;

type SetValue = (value: string) => void;
const valueOf = (event: Event) => (event.currentTarget as HTMLInputElement | HTMLSelectElement).value;

export function SuiteField({ suites, value, set }: { suites: Suite[]; value: string; set: SetValue }) {
  return (
    <label>
      Suite
      <select name="suite" required value={value} onChange={(e) => set(valueOf(e))}>
        <option value="">choose a suite</option>
        {suites.map((s) => (
          <option value={s.id}>
            {s.name} ({s.num_samples} rows)
          </option>
        ))}
      </select>
    </label>
  );
}

export function WorkflowField({
  workflows,
  value,
  set,
}: {
  workflows: WorkflowChoice[];
  value: string;
  set: SetValue;
}) {
  return (
    <label>
      Workflow
      <select name="workflow_id" required value={value} onChange={(e) => set(valueOf(e))}>
        <option value="">choose a workflow</option>
        {workflows.map((w) => (
          <option value={w.id}>
            {w.name} ({w.id})
          </option>
        ))}
      </select>
    </label>
  );
}

/**
 * The workflow's output variable the scorer reads. `optional` offers leaving it to the API (a
 * comparison infers it when the versions have one output variable between them).
 */
export function OutputVariableField({
  variables,
  value,
  set,
  optional = false,
}: {
  variables: OutputVariable[] | null;
  value: string;
  set: SetValue;
  optional?: boolean;
}) {
  return (
    <label>
      Output variable
      <select name="output_variable" required={!optional} value={value} onChange={(e) => set(valueOf(e))}>
        <option value="">{optional ? 'the only one the versions have' : 'choose an output variable'}</option>
        {(variables ?? []).map((v) => (
          <option value={v.prefixed_variable}>{v.prefixed_variable}</option>
        ))}
      </select>
    </label>
  );
}

export function SamplesField({ value, set }: { value: string; set: SetValue }) {
  return (
    <label>
      Rows
      <input
        type="number"
        name="num_samples"
        required
        min={1}
        max={MOST_SAMPLES}
        value={value}
        onInput={(e) => set(valueOf(e))}
      />
    </label>
  );
}

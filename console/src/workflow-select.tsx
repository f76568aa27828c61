import { useApi } from './loading';

/** A workflow as GET /api/wf/ lists it: what a picker shows. */
interface WorkflowSummary {
  id: string;
  name: string;
}

/** The workspace's workflows, newest first (the first hundred), to pick one by name. */
export function WorkflowSelect({
  value,
  onChange,
  label = 'Workflow',
  name = 'workflow_id',
}: {
  value: string;
  onChange: (id: string) => void;
  label?: string;
  name?: string;
}) {
  const { data: workflows, error } = useApi<WorkflowSummary[]>('/wf/?page_size=100');
  return (
    <label>
      {label}
      <select name={name} value={value} onChange={(e) => onChange(e.currentTarget.value)} disabled={!workflows}>
        <option value="">{error ? `workflows unreadable: ${error}` : 'choose a workflow'}</option>
        {workflows?.map((wf) => (
          <option value={wf.id}>
            {wf.name} ({wf.id})
          </option>
        ))}
      </select>
    </label>
  );
}

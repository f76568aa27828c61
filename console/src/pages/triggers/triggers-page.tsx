import type { Trigger } from './trigger';
import { query } from '../../api';
import { Status, useApi } from '../../loading';
import { navigate } from '../../navigation';
import { useCan } from '../../session';
import { WorkflowSelect } from '../../workflow-select';
import { TriggerCard } from './trigger-card';
import { TriggerForm } from './trigger-form';

/** A workflow's webhook triggers (chosen in the address, `?workflow_id=`): their URLs and deliveries; create, edit, rotate. */
export function TriggersPage({ search }: { search: string }) {
  const workflowId = new URLSearchParams(search).get('workflow_id') ?? '';
  const {
    data: triggers,
    error,
    reload,
  } = useApi<Trigger[]>(workflowId ? `/wf/${encodeURIComponent(workflowId)}/triggers/` : null);
  const canBuild = useCan('build');
  return (
    <section aria-labelledby="triggers-title">
      <h1 id="triggers-title">Webhook triggers</h1>
      <WorkflowSelect value={workflowId} onChange={(id) => navigate(`/triggers${query({ workflow_id: id })}`)} />
      {workflowId && <Status error={error} loading={triggers === null} />}
      {triggers?.length === 0 && <p>This workflow has no triggers.</p>}
      {triggers?.map((t) => (
        <TriggerCard trigger={t} canBuild={canBuild} onChanged={() => void reload()} />
      ))}
      {workflowId && canBuild && (
        <details>
          <summary>New trigger</summary>
          <TriggerForm workflowId={workflowId} onSaved={() => void reload()} />
        </details>
      )}
    </section>
  );
}

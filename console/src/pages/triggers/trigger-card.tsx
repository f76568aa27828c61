import { useState } from 'preact/hooks';
import type { Trigger } from './trigger';
import { api } from '../../api';
import { ConfirmButton } from '../../confirm-button';
import { when } from '../../format';
import { Status, useAction } from '../../loading';
import { BASE, follow } from '../../navigation';
import { TableHead } from '../../table-head';
import { TriggerForm } from './trigger-form';

/** One trigger: where to POST, how it answers and checks a delivery, the runs it started; edit, rotate, delete. */
export function TriggerCard({
  trigger,
  canBuild,
  onChanged,
}: {
  trigger: Trigger;
  canBuild: boolean;
  onChanged: () => void;
}) {
  const [editing, setEditing] = useState(false);
  const action = useAction();
  const id = encodeURIComponent(trigger.id);
  const rotate = () =>
    action.act(async () => {
      await api(`/triggers/${id}/rotate/`, { method: 'POST' });
      onChanged();
      return `Trigger ${trigger.name} has a new URL; the old one answers 404 from now on`;
    });
  const remove = () =>
    action.act(async () => {
      await api(`/triggers/${id}/`, { method: 'DELETE' });
      onChanged();
    });

  return (
    <article class="trigger" data-trigger={trigger.id} aria-labelledby={`trigger-${trigger.id}`}>
      <h2 id={`trigger-${trigger.id}`}>{trigger.name}</h2>
      <dl class="facts">
        <dt>URL</dt>
        <dd>
          {trigger.url ? <code class="url">{new URL(trigger.url, location.origin).href}</code> : 'hidden (needs build)'}
        </dd>
        <dt>Answers</dt>
        <dd>{trigger.respond === 'result' ? "the run's outputs" : '202 once the run is recorded'}</dd>
        <dt>Signature</dt>
        <dd>
          {trigger.signature
            ? `${trigger.signature.scheme} in ${trigger.signature.header}${trigger.has_secret ? '' : ' (no secret!)'}`
            : 'none'}
        </dd>
        <dt>Delivery id header</dt>
        <dd>{trigger.dedupe_header ?? '—'}</dd>
        <dt>Rate</dt>
        <dd>{trigger.rate_per_second} per second</dd>
      </dl>
      {canBuild && (
        <div class="actions">
          <button type="button" aria-expanded={editing} onClick={() => setEditing(!editing)}>
            {editing ? 'Close editor' : 'Edit'}
          </button>
          <ConfirmButton
            label="Rotate URL"
            question="The current URL stops working at once."
            confirmLabel="Yes, rotate the URL"
            disabled={action.busy}
            onConfirm={() => void rotate()}
          />
          <ConfirmButton
            label="Delete"
            question={`Delete trigger ${trigger.name}?`}
            confirmLabel="Yes, delete it"
            disabled={action.busy}
            onConfirm={() => void remove()}
          />
        </div>
      )}
      <Status error={action.error} notice={action.notice} />
      {editing && (
        <TriggerForm
          workflowId={trigger.workflow_id}
          trigger={trigger}
          onSaved={() => {
            setEditing(false);
            onChanged();
          }}
        />
      )}
      <table class="deliveries">
        <caption>
          {trigger.recent_runs.length === 0 ? 'No deliveries yet' : 'Recent deliveries (the runs they started)'}
        </caption>
        <TableHead columns={['Run', 'Status', 'Started']} />
        <tbody>
          {trigger.recent_runs.map((r) => (
            <tr data-run={r.run_id}>
              <td>
                <a href={`${BASE}/runs/${r.run_id}`} onClick={(event) => follow(event, `/runs/${r.run_id}`)}>
                  {r.run_id}
                </a>
              </td>
              <td>{r.status}</td>
              <td>{when(r.start_time)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </article>
  );
}

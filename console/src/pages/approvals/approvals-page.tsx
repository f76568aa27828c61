import { useContext, useState } from 'preact/hooks';
import { api } from '../api';
import { Status, useAction, useApi } from '../loading';
import { when } from '../format';
import { BASE, follow } from '../navigation';
import { MeContext, useCan } from '../session';
import type { Run } from '../types';

/** GET /api/wf/paused_workflows/, the fields the inbox shows. */
interface Paused {
  run: Run;
  current_pause: {
    id: string;
    node_id: string;
    pause_message: string | null;
    pause_time: string;
    input_data: Record<string, unknown> | null;
    decisions: Array<{
      user_id: string;
      username: string | null;
      action: string;
      time: string;
      comments: string | null;
    }>;
  };
  workflow: { name: string };
}

const ACTIONS = [
  ['APPROVE', 'Approve'],
  ['DECLINE', 'Decline'],
] as const;

/** The pauses waiting for a person, with what the paused node was given; approve or decline, with a comment. */
export function ApprovalsPage() {
  const { data: paused, error, reload } = useApi<Paused[]>('/wf/paused_workflows/');
  const action = useAction();
  const [comments, setComments] = useState<Record<string, string>>({});
  const me = useContext(MeContext);
  const canDecide = useCan('pause.decide');

  const decide = (item: Paused, decision: string) =>
    action.act(async () => {
      await api(`/wf/process_pause_action/${encodeURIComponent(item.run.id)}/`, {
        method: 'POST',
        body: {
          inputs: {},
          user_id: me?.username ?? 'console',
          action: decision,
          comments: comments[item.run.id] || null,
        },
      });
      await reload();
    });

  return (
    <section aria-labelledby="approvals-title">
      <h1 id="approvals-title">Approvals</h1>
      <Status error={error ?? action.error} loading={paused === null} />
      {paused?.length === 0 && <p>Nothing waits for a person.</p>}
      {paused?.map((item) => (
        <article class="pause" data-run={item.run.id} aria-labelledby={`pause-${item.run.id}`}>
          <h2 id={`pause-${item.run.id}`}>{item.current_pause.pause_message ?? 'A run waits for a decision'}</h2>
          <p>
            {item.workflow.name} ·{' '}
            <a href={`${BASE}/runs/${item.run.id}`} onClick={(event) => follow(event, `/runs/${item.run.id}`)}>
              run {item.run.id}
            </a>{' '}
            · node {item.current_pause.node_id} · paused {when(item.current_pause.pause_time)}
          </p>
          <pre class="json">{JSON.stringify(item.current_pause.input_data ?? {}, null, 2)}</pre>
          {item.current_pause.decisions.length > 0 && (
            <ul class="decisions">
              {item.current_pause.decisions.map((d) => (
                <li>
                  {d.username ?? d.user_id}: {d.action} at {when(d.time)}
                  {d.comments ? ` (${d.comments})` : ''}
                </li>
              ))}
            </ul>
          )}
          {canDecide && (
            <div class="actions">
              <label>
                Comment
                <input
                  name="comments"
                  value={comments[item.run.id] ?? ''}
                  onInput={(e) => setComments({ ...comments, [item.run.id]: e.currentTarget.value })}
                />
              </label>
              {ACTIONS.map(([decision, label]) => (
                <button type="button" disabled={action.busy} onClick={() => void decide(item, decision)}>
                  {label}
                </button>
              ))}
            </div>
          )}
        </article>
      ))}
    </section>
  );
}

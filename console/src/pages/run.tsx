import { TableHead } from '../table-head';
import { useEffect, useState } from 'preact/hooks';
import { RUN_EVENT_NAMES } from '../../../src/engine/run-event-names';
import { api } from '../api';
import { messageOf, Status, useAction } from '../loading';
import { duration, usd, when } from '../format';
import { navigate } from '../navigation';
import { useCan } from '../session';
import { TimelineChart } from '../timeline-chart';
import type { Run } from '../types';

const OPEN = new Set(['PENDING', 'RUNNING', 'PAUSED']);
const json = (value: unknown) => JSON.stringify(value ?? null, null, 2);

/** One run: its timeline, tasks with cost and errors, inputs and outputs, live while it runs; cancel and rerun. */
export function RunPage({ runId }: { runId: string }) {
  const [run, setRun] = useState<Run | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [fromNode, setFromNode] = useState('');
  const action = useAction();
  const canRun = useCan('run');

  const load = () =>
    api<Run>(`/run/${encodeURIComponent(runId)}/`)
      .then((r) => {
        setRun(r);
        setError(null);
      })
      .catch((err: unknown) => setError(messageOf(err)));

  useEffect(() => {
    setRun(null);
    void load();
    // Every event of the run's stream (tasks starting and ending, pauses, the end) reloads it.
    const events = new EventSource(`/api/run/${encodeURIComponent(runId)}/events/`);
    const reload = () => void load();
    for (const name of RUN_EVENT_NAMES) events.addEventListener(name, reload);
    return () => events.close();
  }, [runId]);

  const { act, busy } = action;
  const cancel = () =>
    act(async () => {
      await api(`/wf/cancel_workflow/${encodeURIComponent(runId)}/`, { method: 'POST' });
      await load();
    });
  const rerun = () =>
    act(async () => {
      const again = await api<Run>(`/run/${encodeURIComponent(runId)}/rerun/`, {
        method: 'POST',
        body: { from_node_id: fromNode },
      });
      navigate(`/runs/${again.id}`);
    });

  if (!run) return <Status error={error} loading />;
  const nodes = [...new Set(run.tasks.map((t) => t.node_id))];
  return (
    <section aria-labelledby="run-title">
      <h1 id="run-title">
        Run {run.id} <span class={`status status-${run.status.toLowerCase()}`}>{run.status}</span>
      </h1>
      <dl class="facts">
        <dt>Workflow</dt>
        <dd>{run.workflow_id}</dd>
        <dt>Started</dt>
        <dd>{when(run.start_time)}</dd>
        <dt>Duration</dt>
        <dd>{duration(run.duration)}</dd>
        <dt>Cost</dt>
        <dd>{usd(run.usage?.cost_usd)}</dd>
        {run.message && (
          <>
            <dt>Message</dt>
            <dd>{run.message}</dd>
          </>
        )}
      </dl>
      <Status error={error ?? action.error} />
      {canRun && (
        <div class="actions">
          {OPEN.has(run.status) && (
            <button type="button" disabled={busy} onClick={cancel}>
              Cancel run
            </button>
          )}
          {!OPEN.has(run.status) && nodes.length > 0 && (
            <form
              onSubmit={(event) => {
                event.preventDefault();
                void rerun();
              }}
            >
              <label>
                Rerun from
                <select name="from_node_id" value={fromNode} onChange={(e) => setFromNode(e.currentTarget.value)}>
                  <option value="">choose a node</option>
                  {nodes.map((id) => (
                    <option value={id}>{id}</option>
                  ))}
                </select>
              </label>
              <button type="submit" disabled={busy || !fromNode}>
                Rerun
              </button>
            </form>
          )}
        </div>
      )}
      <h2>Timeline</h2>
      <TimelineChart run={run} />
      <h2>Tasks</h2>
      <table class="tasks">
        <TableHead columns={['Node', 'Status', 'Started', 'Ended', 'Cost', 'Error']} />
        <tbody>
          {run.tasks.map((task) => (
            <tr data-node={task.node_id}>
              <td>{task.node_id}</td>
              <td>{task.status}</td>
              <td>{when(task.start_time)}</td>
              <td>{when(task.end_time)}</td>
              <td>{usd(task.usage?.cost_usd)}</td>
              <td>{task.error ?? ''}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <h2>Inputs</h2>
      <pre class="json">{json(run.initial_inputs)}</pre>
      <h2>Outputs</h2>
      <pre class="json">{json(run.outputs)}</pre>
    </section>
  );
}

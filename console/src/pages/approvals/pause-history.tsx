import { useState } from 'preact/hooks';
import { when } from '../../format';
import { Status, useApi } from '../../loading';
import type { PauseRecord } from './paused';

/** Who decided, what, when, and why: one line per decision. */
export function DecisionList({ decisions }: { decisions: PauseRecord['decisions'] }) {
  if (decisions.length === 0) return null;
  return (
    <ul class="decisions">
      {decisions.map((d) => (
        <li>
          {d.username ?? d.user_id}: {d.action} at {when(d.time)}
          {d.comments ? ` (${d.comments})` : ''}
        </li>
      ))}
    </ul>
  );
}

/** The run's earlier pauses and how each was resumed (GET /api/wf/pause_history/{run_id}/), read when opened. */
export function PauseHistory({ runId }: { runId: string }) {
  const [open, setOpen] = useState(false);
  return (
    <details class="pause-history" onToggle={(e) => setOpen(e.currentTarget.open)}>
      <summary>Pause history of run {runId}</summary>
      {open && <HistoryList runId={runId} />}
    </details>
  );
}

function HistoryList({ runId }: { runId: string }) {
  const { data: pauses, error } = useApi<PauseRecord[]>(`/wf/pause_history/${encodeURIComponent(runId)}/`);
  const resumed = pauses?.filter((p) => p.resume_time !== null) ?? [];
  return (
    <>
      <Status error={error} loading={pauses === null} />
      {pauses && resumed.length === 0 && <p>No earlier pause of this run.</p>}
      <ol>
        {resumed.map((p) => (
          <li>
            {p.pause_message ?? 'A pause'} at node {p.node_id}, {when(p.pause_time)}: {p.resume_action} by{' '}
            {p.resume_user_id} at {when(p.resume_time)}
            {p.comments ? ` (${p.comments})` : ''}
            <DecisionList decisions={p.decisions} />
          </li>
        ))}
      </ol>
    </>
  );
}

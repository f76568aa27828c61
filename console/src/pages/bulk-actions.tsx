import { useContext, useState } from 'preact/hooks';
import { ACTION_PERMISSIONS, RUN_ACTION_KINDS, type RunActionKind } from '../../../src/contracts/run-action-contract';
import type { RunActionAnswer } from '../../../src/modules/run-actions/run-actions.schemas';
import { api } from '../api';
import { Status, useAction } from '../loading';
import { MeContext } from '../session';

/** How long between reads of a bulk action's progress while it acts. */
const POLL_MS = 500;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A rerun needs the node to start from, which differs per workflow: the run's own page offers it. */
const OFFERED = RUN_ACTION_KINDS.filter((kind) => kind !== 'rerun');

function summary(answer: RunActionAnswer): string {
  const counts = new Map<string, number>();
  for (const r of answer.results) counts.set(r.outcome, (counts.get(r.outcome) ?? 0) + 1);
  const outcomes = [...counts].map(([outcome, n]) => `${n} ${outcome}`).join(', ');
  return `Bulk ${answer.action} ${answer.id ?? ''} ${answer.status.toLowerCase()}: ${outcomes || 'no runs matched'}`;
}

/**
 * The selected runs' bulk action (POST /api/runs/actions/ with `filter.run_ids`): one of the actions
 * the caller's role holds, then its progress until it ends. The API acts on each run at its own pace
 * and decides, per run, whether the caller may.
 */
export function BulkActions({ selected, onDone }: { selected: string[]; onDone: () => void }) {
  const permissions = useContext(MeContext)?.permissions ?? [];
  const offered = OFFERED.filter(
    (kind) => permissions.includes('pause.decide') && permissions.includes(ACTION_PERMISSIONS[kind]),
  );
  const [kind, setKind] = useState<RunActionKind | ''>('');
  const action = useAction();
  if (offered.length === 0) return null;

  const apply = () =>
    action.act(async () => {
      let answer = await api<RunActionAnswer>('/runs/actions/?page_size=100', {
        method: 'POST',
        body: { filter: { run_ids: selected }, action: kind },
      });
      while (answer.status === 'RUNNING' && answer.id) {
        await sleep(POLL_MS);
        answer = await api<RunActionAnswer>(`/runs/actions/${encodeURIComponent(answer.id)}/?page_size=100`);
      }
      onDone();
      return summary(answer);
    });

  return (
    <form
      class="bulk"
      aria-label="Bulk action on the selected runs"
      onSubmit={(event) => {
        event.preventDefault();
        void apply();
      }}
    >
      <span>{selected.length} selected</span>
      <label>
        Action
        <select name="bulk_action" value={kind} onChange={(e) => setKind(e.currentTarget.value as RunActionKind)}>
          <option value="">choose an action</option>
          {offered.map((k) => (
            <option value={k}>{k}</option>
          ))}
        </select>
      </label>
      <button type="submit" disabled={action.busy || !kind || selected.length === 0}>
        Apply to {selected.length} runs
      </button>
      {action.busy && <p aria-live="polite">Acting on {selected.length} runs…</p>}
      <Status error={action.error} notice={action.notice} />
    </form>
  );
}

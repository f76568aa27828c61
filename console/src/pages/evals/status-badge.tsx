import type { EvalStatus } from './eval-types';

/** An eval run's or comparison's status, coloured as the runs' are (the word says it too). */
export function EvalStatusBadge({ status }: { status: EvalStatus }) {
  return <span class={`status status-${status.toLowerCase()}`}>{status}</span>;
}

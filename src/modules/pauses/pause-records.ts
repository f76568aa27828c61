import { fromJsonText } from '../../db/json-text';
import type { PauseDoc } from '../../db/models';
import type { ApprovalDeliveryView } from '../../db/runs/approval-deliveries';
import type { PauseDecision } from '../../engine/approvals';
import type { PauseHistoryResponse } from './pauses.schemas';

/**
 * PySpur's synthetic id `PH_<run>_<node>`, with the pause's number when a node paused again.
 * `notifications`: the pause's approval deliveries (approval-deliveries.ts).
 */
export function toPauseResponse(p: PauseDoc, notifications: ApprovalDeliveryView[] = []): PauseHistoryResponse {
  const n = Number(p._id.split(':').pop());
  return {
    id: `PH_${p.run_id}_${p.node_id}${n > 1 ? `_${n}` : ''}`,
    run_id: p.run_id,
    node_id: p.node_id,
    pause_message: p.pause_message ?? null,
    pause_time: p.pause_time.toISOString(),
    resume_time: p.resume_time ? p.resume_time.toISOString() : null,
    resume_user_id: p.resume_user_id ?? null,
    resume_action: p.resume_action ?? null,
    input_data: fromJsonText<Record<string, unknown>>(p.input_data),
    comments: p.comments ?? null,
    decisions: decisionsOf(p),
    notifications,
  };
}

/** Recorded decisions; a pause resolved before they were recorded shows its one resolution. */
function decisionsOf(p: PauseDoc): PauseHistoryResponse['decisions'] {
  const recorded = fromJsonText<PauseDecision[]>(p.decisions);
  if (recorded) return recorded.map((d) => ({ ...d, username: d.username ?? null }));
  if (!p.resume_time || !p.resume_user_id || !p.resume_action) return [];
  return [
    {
      user_id: p.resume_user_id,
      username: null,
      action: p.resume_action,
      channel: 'api',
      time: p.resume_time.toISOString(),
      comments: p.comments ?? null,
    },
  ];
}

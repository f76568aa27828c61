import { fromJsonText } from '../../db/json-text';
import type { PauseDoc } from '../../db/models';
import type { PauseHistoryResponse } from './pauses.schemas';

/** PySpur's synthetic id `PH_<run>_<node>`, with the pause's number when a node paused again. */
export function toPauseResponse(p: PauseDoc): PauseHistoryResponse {
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
  };
}

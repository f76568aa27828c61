import type { Context } from 'koa';
import type { RunReader } from '../../runs/reader';
import type { BlockingOutcome } from '../../runs/outcome-wait';
import { RunStillGoing } from './runs.schemas';

/**
 * A blocking run's answer, the same wherever a blocking run is started (`/wf/{id}/run/`, a webhook
 * that answers with the result): its outputs, or (past the wait limit) 202 and where to poll it.
 */
export function blockingAnswerOf(reader: RunReader) {
  return async (outcome: BlockingOutcome, ctx: Context) => {
    if (outcome.kind === 'done') return outcome.outputsById;
    // The run goes on in Temporal; the client polls it like a non-blocking one.
    const run = await reader.get(outcome.runId);
    ctx.status = 202;
    return RunStillGoing.parse({
      run_id: run.id,
      status: run.status,
      detail: `Run ${run.id} is still going; poll /api/run/${run.id}/status/`,
    });
  };
}

import type { Context } from 'koa';
import { RunResponse } from '../../runs/response.schemas';
import { z } from '../../zod';

/** PySpur's runv2 answers a pause and a failure as `{detail: <the run>}`. */
export const RunInDetail = z.object({ detail: RunResponse }).openapi('RunInDetail');

/**
 * A blocking run answered as PySpur's `runv2` answers it: the run itself with a message saying how
 * it went; 202 with the run in `detail` at a pause (or, in Spur, past the blocking wait, with where
 * to poll), and 500 with the run in `detail` when it failed (PySpur's status, which its clients read
 * as "the workflow failed", not as a fault of the server: nothing is logged as one).
 */
export function runV2Answer(run: RunResponse, ctx: Context): RunResponse | { detail: RunResponse } {
  switch (run.status) {
    case 'COMPLETED':
      return { ...run, message: 'Workflow execution completed successfully.' };
    case 'CANCELED':
      return run;
    case 'PAUSED':
      ctx.status = 202;
      return { detail: { ...run, message: 'Workflow execution paused for human intervention.' } };
    case 'FAILED':
      ctx.status = 500;
      return { detail: { ...run, message: `Workflow execution failed: ${run.message ?? 'a node failed'}` } };
    default:
      ctx.status = 202;
      return { detail: { ...run, message: `Run ${run.id} is still going; poll /api/run/${run.id}/status/` } };
  }
}

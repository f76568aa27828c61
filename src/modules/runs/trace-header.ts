import type { Context } from 'koa';
import { formatTraceparent, parseTraceparent } from '../../contracts/trace-ids';

/**
 * The caller's W3C `traceparent`, to continue its trace with the run's: normalised for the run
 * record, or null. A malformed header is ignored, never refused: tracing must not fail a run.
 */
export function traceParentOf(ctx: Context): string | null {
  const caller = parseTraceparent(ctx.get('traceparent'));
  return caller ? formatTraceparent(caller) : null;
}

import { runWorkflowId } from '../../temporal/shared/workflow-names';
import type { Engine } from './engine';

/**
 * The largest payload (workflow input, activity input or result, marker) in a run's Temporal
 * history, and how many events it has: what values by reference keep small.
 */
export async function largestHistoryPayload(engine: Engine, runId: string): Promise<{ bytes: number; events: number }> {
  const history = await engine.api.temporal.workflow
    .getHandle(runWorkflowId(runId, engine.api.config.temporal.workflowIdPrefix))
    .fetchHistory();
  let bytes = 0;
  const walk = (v: unknown) => {
    if (v instanceof Uint8Array) bytes = Math.max(bytes, v.length);
    else if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') Object.values(v).forEach(walk);
  };
  walk(history.events);
  return { bytes, events: history.events?.length ?? 0 };
}

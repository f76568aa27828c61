import type { temporal } from '@temporalio/proto';
import { runWorkflowId } from '../../src/contracts/workflow-names';
import type { Engine } from './engine';

/**
 * A run's Temporal history once its workflow has closed. A blocking run is answered from its final
 * save, which a worker in the api's process makes before the workflow task recording it completes:
 * read at once, the history can lack that task's events.
 */
export async function closedRunHistory(engine: Engine, runId: string): Promise<temporal.api.history.v1.IHistory> {
  const handle = engine.api.temporal.workflow.getHandle(
    runWorkflowId(runId, engine.api.config.temporal.workflowIdPrefix),
  );
  await handle.result().catch(() => undefined);
  return handle.fetchHistory();
}

/**
 * The largest payload (workflow input, activity input or result, marker) in a run's Temporal
 * history, and how many events it has: what values by reference keep small.
 */
export async function largestHistoryPayload(engine: Engine, runId: string): Promise<{ bytes: number; events: number }> {
  const history = await closedRunHistory(engine, runId);
  let bytes = 0;
  const walk = (v: unknown) => {
    if (v instanceof Uint8Array) bytes = Math.max(bytes, v.length);
    else if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') Object.values(v).forEach(walk);
  };
  walk(history.events);
  return { bytes, events: history.events?.length ?? 0 };
}

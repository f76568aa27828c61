import { Context } from '@temporalio/activity';
import type { GraphNode } from '../../src/engine/run-contract';
import type { NodeAttempt } from '../../src/telemetry/node-span';
import type { RunTrace } from '../../src/contracts/trace-ids';

/**
 * The attempt of a traced node activity, as its span names it: Temporal's attempt number, so a
 * retry (on this worker or on another after a crash) is a second span under the same run span.
 * Null when the run is not traced (a batch row run inside its chunk carries no trace).
 */
export function nodeAttempt(
  { runId, trace }: { runId: string; trace?: RunTrace | undefined },
  node: GraphNode,
  extra: { name?: string; attributes?: NodeAttempt['attributes'] } = {},
): NodeAttempt | null {
  if (!trace) return null;
  return {
    runId,
    trace,
    node,
    attempt: Context.current().info.attempt,
    name: extra.name ?? `execute ${node.node_type}`,
    ...(extra.attributes ? { attributes: extra.attributes } : {}),
  };
}

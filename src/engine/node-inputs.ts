import type { GraphLevel } from './graph';
import { ENGINE_NODE_TYPES } from './node-kinds';
import type { NodeOutput } from './run-contract';

/** Where a node ended up; `null` output means "nothing to hand on" (untaken route, …). */
export type NodeState =
  | { status: 'COMPLETED'; output: NodeOutput | null }
  | { status: 'FAILED'; error: string }
  | { status: 'CANCELED'; upstreamFailure: boolean };

export type InputDecision =
  | { kind: 'run'; input: Record<string, unknown> }
  | { kind: 'cancel'; upstreamFailure: boolean }
  | { kind: 'fail'; error: string };

/**
 * PySpur's input rule: one key per incoming link, the
 * predecessor's title, holding its output (for a router, the payload of the linked route). A failed
 * or cancelled-by-failure predecessor cancels the node with "Upstream failure"; a null payload
 * cancels it quietly. A CoalesceNode instead drops such inputs and runs if any is left.
 */
export function decideNodeInput(
  level: GraphLevel,
  nodeId: string,
  states: ReadonlyMap<string, NodeState>,
): InputDecision {
  const node = level.byId.get(nodeId);
  if (!node) return { kind: 'fail', error: `Unknown node ${nodeId}` };
  const links = level.incoming.get(nodeId) ?? [];
  if (links.length === 0) return { kind: 'fail', error: `Node ${nodeId} has no input` };
  const isCoalesce = node.node_type === ENGINE_NODE_TYPES.coalesce;
  const input: Record<string, unknown> = {};
  let upstreamFailure = false;
  let missing = false;
  for (const link of links) {
    const source = level.byId.get(link.source_id);
    const state = states.get(link.source_id);
    if (!source || !state) return { kind: 'fail', error: `Predecessor ${link.source_id} of ${nodeId} has not run` };
    if (state.status !== 'COMPLETED') {
      upstreamFailure ||= state.status === 'FAILED' || state.upstreamFailure;
      missing = true;
      continue;
    }
    let payload: unknown = state.output;
    if (source.node_type === ENGINE_NODE_TYPES.router) {
      if (!link.source_handle)
        return { kind: 'fail', error: `Link from router ${source.id} to ${nodeId} names no route (source_handle)` };
      payload = state.output?.[link.source_handle] ?? null;
    }
    if (payload === null || payload === undefined) {
      missing = true;
      continue;
    }
    input[source.title] = payload;
  }
  if (isCoalesce) return Object.keys(input).length > 0 ? { kind: 'run', input } : { kind: 'cancel', upstreamFailure };
  return missing ? { kind: 'cancel', upstreamFailure } : { kind: 'run', input };
}

import type { GraphLevel } from './graph';
import { type NodeState, decideNodeInput } from './node-inputs';
import { topologicalOrder } from './graph';
import type { RunDefinition, TaskRecord } from './run-contract';

/**
 * What a rerun takes over from the run it repeats: the original tasks of every top-level node not
 * downstream of its start, marked `reused` (outputs by reference where large, as recorded).
 */
export type RerunPlanResult = { ok: true; tasks: TaskRecord[] } | { ok: false; message: string };

/**
 * The outcomes the walker presets for reused tasks (all COMPLETED, or CANCELED quietly). Derived
 * from the tasks rather than carried beside them, so a rerun's workflow input holds each output once.
 */
export function reusedStates(tasks: readonly TaskRecord[]): Map<string, NodeState> {
  return new Map(
    tasks.map((t): [string, NodeState] => [
      t.node_id,
      t.status === 'COMPLETED'
        ? { status: 'COMPLETED', output: t.outputs }
        : { status: 'CANCELED', upstreamFailure: false },
    ]),
  );
}

/** The node and everything reachable from it along links (its own level only). */
export function downstreamOf(level: GraphLevel, nodeId: string): Set<string> {
  const seen = new Set<string>([nodeId]);
  const queue = [nodeId];
  while (queue.length > 0) {
    for (const next of level.outgoing.get(queue.shift() as string) ?? []) {
      if (!seen.has(next)) {
        seen.add(next);
        queue.push(next);
      }
    }
  }
  return seen;
}

/**
 * Which outcomes of `original` (an ended run's tasks) a rerun from `fromNodeId` reuses. Only a
 * top-level node can be the start (a loop's or composite's inner node runs as part of its
 * container). A reused node must have ended COMPLETED, or CANCELED quietly where the engine would
 * cancel it again (an untaken route): a node that failed, was declined, or was cancelled with the
 * run has no outcome to reuse, so the rerun must start at or above it.
 */
export function planRerun(
  definition: RunDefinition,
  level: GraphLevel,
  fromNodeId: string,
  original: readonly TaskRecord[],
): RerunPlanResult {
  if (!level.byId.has(fromNodeId)) {
    const nested = definition.nodes.find((n) => n.id === fromNodeId);
    if (nested)
      return {
        ok: false,
        message: `Node '${fromNodeId}' is inside '${nested.parent_id ?? ''}': a rerun starts from a top-level node (rerun from its container)`,
      };
    return { ok: false, message: `Node '${fromNodeId}' is not in the workflow definition the rerun uses` };
  }
  const rerun = downstreamOf(level, fromNodeId);
  const recorded = new Map(original.map((t) => [t.node_id, t]));
  const states = new Map<string, NodeState>();
  const tasks: TaskRecord[] = [];
  for (const id of topologicalOrder(level)) {
    if (rerun.has(id)) continue;
    const task = recorded.get(id);
    const state = task ? reusableState(level, id, task, states) : null;
    if (!state || !task) {
      const seen = task ? `ended ${task.status}` : 'did not run';
      return {
        ok: false,
        message: `Node '${id}' ${seen} in the original run, so there is no output to reuse: rerun from it or from a node above it`,
      };
    }
    states.set(id, state);
    const { usage: _spent, ...kept } = task; // tokens were spent by the original run, not this one
    tasks.push({ ...kept, reused: true });
  }
  return { ok: true, tasks };
}

function reusableState(
  level: GraphLevel,
  id: string,
  task: TaskRecord,
  states: ReadonlyMap<string, NodeState>,
): NodeState | null {
  if (task.status === 'COMPLETED') return { status: 'COMPLETED', output: task.outputs };
  if (task.status !== 'CANCELED') return null;
  // Cancelled quietly only if the reused predecessors would cancel it quietly again.
  const decision = decideNodeInput(level, id, states);
  return decision.kind === 'cancel' && !decision.upstreamFailure
    ? { status: 'CANCELED', upstreamFailure: false }
    : null;
}

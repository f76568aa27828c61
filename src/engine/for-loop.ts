import type { GraphLevel } from './graph';
import { ENGINE_NODE_TYPES } from './node-kinds';
import type { NodeState } from './node-inputs';
import { valueAtPath } from './paths';
import type { GraphNode, NodeOutput } from './run-contract';
import type { GraphWalker } from './graph-walker';

/**
 * Most iterations a ForLoopNode may run. Every iteration adds its child nodes' activities to the
 * run's Temporal history (~50k events at most); 1 000 iterations of a handful of nodes stay well
 * inside it. Definitions over it are refused when saved (422); the engine checks again at run time.
 */
export const MAX_LOOP_ITERATIONS = 1000;

export interface LoopResult {
  state: NodeState;
  output: NodeOutput | null;
  /** `{child node id: [output of iteration 1, 2, …]}`, the task's `subworkflow_output`. */
  history: Record<string, unknown[]>;
}

/**
 * ForLoopNode, as PySpur runs it: runs its child graph `num_iterations` times. Each iteration
 * sees the loop's input, `loop_history` and the previous iteration's output fields at top level;
 * the loop's output is the child OutputNode's output of the last iteration.
 */
export async function runForLoop(
  runner: GraphWalker,
  level: GraphLevel,
  node: GraphNode,
  input: Record<string, unknown>,
): Promise<LoopResult> {
  const history: Record<string, unknown[]> = {};
  const fail = (error: string): LoopResult => ({ state: { status: 'FAILED', error }, output: null, history });
  const child = level.children.get(node.id);
  const childInput = child?.nodes.filter((n) => n.node_type === ENGINE_NODE_TYPES.input) ?? [];
  const childOutput = child?.nodes.filter((n) => n.node_type === ENGINE_NODE_TYPES.output) ?? [];
  if (!child || childInput.length !== 1 || childOutput.length !== 1) {
    return fail(`ForLoopNode ${node.id} needs exactly one child InputNode and one child OutputNode`);
  }
  const iterations = Number(node.config.num_iterations ?? 1);
  if (!Number.isInteger(iterations) || iterations < 1)
    return fail(`ForLoopNode ${node.id}: num_iterations must be a positive integer`);
  if (iterations > MAX_LOOP_ITERATIONS)
    return fail(`ForLoopNode ${node.id}: num_iterations ${iterations} is over the maximum of ${MAX_LOOP_ITERATIONS}`);
  const outputId = (childOutput[0] as GraphNode).id;
  const base = mappedInput(node, input);
  if (typeof base === 'string') return fail(base);
  let previous: NodeOutput = {};
  for (let i = 1; i <= iterations; i++) {
    const states = await runner.runLevel(child, { ...base, loop_history: structuredCopy(history), ...previous }, false);
    for (const [id, state] of states) {
      if (state.status === 'COMPLETED' && state.output) (history[id] ??= []).push(state.output);
    }
    const failed = [...states.entries()].find(([, s]) => s.status === 'FAILED');
    if (failed) return fail(`Iteration ${i}: node ${failed[0]} failed: ${(failed[1] as { error: string }).error}`);
    const out = states.get(outputId);
    if (out?.status !== 'COMPLETED' || !out.output)
      return fail(`Iteration ${i}: the child OutputNode produced no output`);
    previous = out.output;
  }
  return { state: { status: 'COMPLETED', output: previous }, output: previous, history };
}

/**
 * `input_map` {child field: "Pred.path"} picks a child's input (a loop's iteration, a
 * SubworkflowNode's child run); without it the node's input is used.
 */
export function mappedInput(node: GraphNode, input: Record<string, unknown>): Record<string, unknown> | string {
  const map = node.config.input_map;
  if (
    map === null ||
    map === undefined ||
    typeof map !== 'object' ||
    Array.isArray(map) ||
    Object.keys(map).length === 0
  )
    return input;
  const picked: Record<string, unknown> = {};
  for (const [field, path] of Object.entries(map)) {
    const lookup = valueAtPath(input, String(path));
    if (!lookup.found)
      return `${node.node_type} ${node.id}: input_map field '${field}': path '${String(path)}' not found in the input`;
    picked[field] = lookup.value;
  }
  return picked;
}

function structuredCopy<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

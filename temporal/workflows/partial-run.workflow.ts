import { ApplicationFailure } from '@temporalio/workflow';
import { FailureType } from '../../src/contracts/failures';
import { GraphError, type GraphLevel, planGraph, restrictToAncestors } from '../../src/engine/graph';
import type { NodeState } from '../../src/engine/node-inputs';
import type { NodeOutput } from '../../src/engine/run-contract';
import type { PartialRunInput } from '../../src/contracts/run-contract';
import { GraphRunner } from './graph-runner';
import { ENGINE_NODE_TYPES } from '../../src/engine/node-kinds';

/**
 * PySpur's `run_partial`: computes one node and whatever it needs that has no
 * precomputed output. No run record, no tasks, no version. Returns every non-null output by id.
 */
export async function spurPartialRun(input: PartialRunInput): Promise<Record<string, NodeOutput>> {
  let level: GraphLevel;
  try {
    level = planGraph(input.definition);
  } catch (err) {
    if (err instanceof GraphError) throw ApplicationFailure.nonRetryable(err.message, FailureType.InvalidGraph);
    throw err;
  }
  const known = new Map<string, NodeState>(
    Object.entries(input.precomputed).map(([id, output]) => [id, { status: 'COMPLETED', output }]),
  );
  const needed = level.byId.has(input.targetNodeId)
    ? restrictToAncestors(level, input.targetNodeId, new Set(known.keys()))
    : { ...level, nodes: [] };
  const runner = new GraphRunner(
    input.valueScope,
    {
      recordTask: () => undefined,
      onNodeFailed: () => undefined,
      // A partial run previews data: a HumanInterventionNode passes its input through, unpaused.
      pause: async (_node, nodeInput) => ({ status: 'COMPLETED', output: nodeInput }),
      // So does a WaitNode, unwaited; a callback's body cannot be previewed.
      wait: async (node, nodeInput) =>
        node.node_type === ENGINE_NODE_TYPES.wait
          ? { status: 'COMPLETED', output: nodeInput }
          : { status: 'FAILED', error: `${node.node_type} waits only in a run: a partial run cannot preview it` },
    },
    // A preview spends outside any budget (its calls are not a run's); it never pauses or waits,
    // and acts on nothing outside: a node that would post, send or write hands on a stub.
    {
      slots: { waiting: () => undefined, granted: () => undefined },
      shortCalls: true,
      dryRun: { pauses: 'approve' },
    },
  );
  const states = await runner.runLevel(needed, input.inputNodeInput, false, { preset: known, allowEmptyInput: true });
  const outputs: Record<string, NodeOutput> = {};
  for (const [id, state] of states) if (state.status === 'COMPLETED' && state.output) outputs[id] = state.output;
  return outputs;
}

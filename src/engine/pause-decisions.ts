import type { NodeState } from './node-inputs';
import type { GraphNode, NodeOutput, TaskWrite } from './run-contract';
import type { PauseAction } from './statuses';

/** The decision that settled a HumanInterventionNode's pause: what, by whom, with which data. */
export interface NodeDecision {
  action: PauseAction;
  userId: string;
  inputs: Record<string, unknown>;
}

/** What a decision does to its paused node and to the run. */
export interface DecidedNode {
  /** The node's task as the decision leaves it; when it ended is the workflow's clock to say. */
  task: Required<Pick<TaskWrite, 'status' | 'outputs' | 'error'>>;
  /** The node's state, which the nodes after it read. */
  state: NodeState;
  /** A DECLINE ends the run CANCELED (once its other branches are done) with this message; else null. */
  runDeclined: string | null;
}

/**
 * PySpur's three actions. APPROVE: the node's output is the data it paused with plus the human's
 * inputs, the original's keys winning. OVERRIDE: the human's inputs win. DECLINE: the node is
 * cancelled (not failed: its dependents are cancelled, not failed upstream) and so is the run.
 */
export function decidePausedNode(
  node: Pick<GraphNode, 'id' | 'title'>,
  pausedWith: Record<string, unknown>,
  decision: NodeDecision,
): DecidedNode {
  if (decision.action === 'DECLINE')
    return {
      task: { status: 'CANCELED', outputs: null, error: `Declined by ${decision.userId}` },
      state: { status: 'CANCELED', upstreamFailure: false },
      runDeclined: `Declined by ${decision.userId} at node '${node.title}' (${node.id})`,
    };
  const output: NodeOutput =
    decision.action === 'APPROVE' ? { ...decision.inputs, ...pausedWith } : { ...pausedWith, ...decision.inputs };
  return {
    task: { status: 'COMPLETED', outputs: output, error: null },
    state: { status: 'COMPLETED', output },
    runDeclined: null,
  };
}

import type { NodeState } from './node-inputs';
import type { AgentStepInput, AgentStepResult, ExecuteNodeResult, GraphNode, TokenUsage } from './run-contract';

/** What a composite node (Agent, BestOfN) runs its steps with: the walker's executor and pause hook. */
export interface StepRunner {
  runId: string;
  execute(
    node: GraphNode,
    input: Record<string, unknown>,
  ): Promise<Pick<ExecuteNodeResult, 'output' | 'startTime' | 'usage'>>;
  agentStep(input: AgentStepInput): Promise<AgentStepResult>;
  pause?(node: GraphNode, input: Record<string, unknown>): Promise<NodeState>;
  isCancellation(err: unknown): boolean;
  failureMessage(err: unknown): string;
}

/** A composite node's outcome: its state, the steps' outputs (the task's `subworkflow_output`) and tokens. */
export interface CompositeResult {
  state: NodeState;
  history: Record<string, unknown[]>;
  usage?: TokenUsage;
}

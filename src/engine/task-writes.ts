import type { NodeState } from './node-inputs';
import { modelOf } from './model-calls';
import type { ExecuteNodeResult, GraphNode, ModelFailure, NodeOutput, TaskWrite } from './run-contract';

/** What a node's call answered, as far as its task shows it (a fallback's model and failures too). */
export type CallAnswer = Pick<ExecuteNodeResult, 'startTime' | 'usage' | 'dryRun'> & {
  endTime?: string;
  model?: string;
  modelFailures?: ModelFailure[];
};

/** The task fields a node's answered call adds to its write (the graph walker's and a carried end's alike). */
export function answerFields(node: GraphNode, answer: CallAnswer): Partial<TaskWrite> {
  const { startTime, endTime, usage, model, modelFailures, dryRun } = answer;
  const answered = model ?? modelOf(node);
  return {
    startTime,
    // The activity's own clock: the workflow's (a workflow task's start) may be before the node began.
    ...(endTime ? { endTime } : {}),
    ...(usage ? { usage } : {}),
    ...(answered ? { model: answered } : {}),
    ...(modelFailures ? { modelFailures } : {}),
    ...(dryRun ? { dryRun } : {}),
  };
}

/** A node's task write for its final state; `extra` adds what its run knows (inputs, the call's answer). */
export function taskWrite(nodeId: string, state: NodeState, extra: Partial<TaskWrite>, now: () => string): TaskWrite {
  return {
    nodeId,
    status: state.status,
    error: state.status === 'FAILED' ? state.error : (extra.error ?? null),
    ...(extra.inputs !== undefined ? { inputs: extra.inputs } : {}),
    ...(extra.outputs !== undefined
      ? { outputs: extra.outputs }
      : state.status === 'COMPLETED'
        ? { outputs: state.output }
        : {}),
    ...(extra.subworkflowOutput !== undefined ? { subworkflowOutput: extra.subworkflowOutput } : {}),
    ...(extra.startTime !== undefined ? { startTime: extra.startTime } : {}),
    ...(extra.usage !== undefined ? { usage: extra.usage } : {}),
    ...(extra.model !== undefined ? { model: extra.model } : {}),
    ...(extra.modelFailures !== undefined ? { modelFailures: extra.modelFailures } : {}),
    ...(extra.dryRun !== undefined ? { dryRun: extra.dryRun } : {}),
    endTime: extra.endTime ?? now(),
  };
}

/** The task write of a node whose call answered (the graph walker's for an executed node). */
export function answeredWrite(
  node: GraphNode,
  input: Record<string, unknown>,
  answer: CallAnswer & { output: NodeOutput | null },
): TaskWrite {
  return taskWrite(
    node.id,
    { status: 'COMPLETED', output: answer.output },
    { inputs: input, ...answerFields(node, answer) },
    () => new Date().toISOString(),
  );
}

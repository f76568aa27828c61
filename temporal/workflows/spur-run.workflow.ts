import { ApplicationFailure, isCancellation, proxyLocalActivities, upsertSearchAttributes } from '@temporalio/workflow';
import type { ProjectionActivities } from '../activities';
import { FailureType } from '../shared/failures';
import { GraphError, type GraphLevel, planGraph } from '../shared/graph';
import type { NodeState } from '../shared/node-inputs';
import type { GraphNode, NodeOutput, SpurRunInput, SpurRunResult } from '../shared/run-contract';
import { SpurRunStatus } from '../shared/search-attributes';
import type { RunStatus } from '../shared/statuses';
import { PROJECTION_OPTIONS } from './activity-options';
import { GraphRunner, failureMessage } from './graph-runner';

const projection = proxyLocalActivities<ProjectionActivities>(PROJECTION_OPTIONS);

/** One Temporal workflow per run (`run-<runId>`): schedule the graph, keep the projection current. */
export async function spurRun(input: SpurRunInput): Promise<SpurRunResult> {
  try {
    return await executeRun(input);
  } catch (err) {
    if (isCancellation(err)) throw err;
    // Whatever went wrong, the run record must not stay PENDING/RUNNING: record why it failed.
    const message = `Run failed: ${failureMessage(err)}`;
    await projection.finishRun({ runId: input.runId, status: 'FAILED', message, outputsByTitle: {} });
    setStatus('FAILED');
    return { status: 'FAILED', outputsById: {}, message };
  }
}

async function executeRun(input: SpurRunInput): Promise<SpurRunResult> {
  const level = plan(input);
  await projection.startRun({
    runId: input.runId,
    tasks: level.nodes.map((n, index) => ({ nodeId: n.id, taskId: input.taskIds[n.id] ?? `${input.runId}-${index}`, index })),
  });
  setStatus('RUNNING');

  let firstFailure: string | null = null;
  const pending: Promise<void>[] = [];
  const runner = new GraphRunner(input.runId, {
    recordTasks: (writes) => projection.recordTasks({ runId: input.runId, writes }),
    onNodeFailed: (node, error) => {
      if (firstFailure !== null) return;
      firstFailure = failedNodeMessage(node, error);
      pending.push(projection.markRunFailed({ runId: input.runId, message: firstFailure }));
    },
  });
  const states = await runner.runLevel(level, input.inputNodeInput, true);
  await Promise.all(pending);

  const status: RunStatus = firstFailure === null ? 'COMPLETED' : 'FAILED';
  const outputs = collectOutputs(level, states);
  await projection.finishRun({ runId: input.runId, status, message: firstFailure, outputsByTitle: outputs.byTitle });
  setStatus(status);
  return { status, outputsById: outputs.byId, message: firstFailure };
}

function plan(input: SpurRunInput): GraphLevel {
  try {
    return planGraph(input.definition);
  } catch (err) {
    // The api checks graphs before starting; this guards definitions changed underneath it.
    if (err instanceof GraphError) throw ApplicationFailure.nonRetryable(err.message, FailureType.InvalidGraph);
    throw err;
  }
}

function setStatus(status: RunStatus): void {
  upsertSearchAttributes([{ key: SpurRunStatus, value: status }]);
}

function failedNodeMessage(node: GraphNode, error: string): string {
  return `Node '${node.title}' (${node.id}) failed: ${error.split('\n')[0]}`;
}

/** Nodes that produced a non-empty output: by id for the blocking response, by title for the run. */
function collectOutputs(level: GraphLevel, states: Map<string, NodeState>) {
  const byId: Record<string, NodeOutput> = {};
  const byTitle: Record<string, NodeOutput> = {};
  for (const node of level.nodes) {
    const state = states.get(node.id);
    if (state?.status !== 'COMPLETED' || !state.output || Object.keys(state.output).length === 0) continue;
    byId[node.id] = state.output;
    byTitle[node.title] = state.output;
  }
  return { byId, byTitle };
}

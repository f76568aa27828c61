import {
  CancellationScope,
  ChildWorkflowCancellationType,
  ParentClosePolicy,
  isCancellation,
  proxyActivities,
  startChild,
} from '@temporalio/workflow';
import type { NodeState } from '../../src/engine/node-inputs';
import type { GraphNode } from '../../src/engine/run-contract';
import type { SpurRunInput, SpurRunResult } from '../../src/contracts/run-contract';
import {
  RECORD_SUBWORKFLOW_RUN_ACTIVITY,
  type RecordSubworkflowRunActivity,
} from '../../src/contracts/subworkflow-contract';
import { failureMessage } from '../../src/engine/graph-walker';
import { childRunOptions } from './child-run';
import type { DryRun } from '../../src/engine/dry-run';

function childDryRun({ recordedRunId: _recorded, ...dryRun }: DryRun): DryRun {
  return dryRun;
}

/** What the parent's task shows while its child runs. */
export interface SubworkflowTaskHooks {
  waitingFor(nodeId: string, childRunId: string | null): void;
}

function recordActivity(node: GraphNode): RecordSubworkflowRunActivity {
  return proxyActivities<Record<string, RecordSubworkflowRunActivity>>({
    startToCloseTimeout: '1m',
    retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s' },
    summary: `${node.title} (${node.id}): record the child run`,
  })[RECORD_SUBWORKFLOW_RUN_ACTIVITY] as RecordSubworkflowRunActivity;
}

/**
 * A SubworkflowNode: records the child run (once, however often the activity is retried), runs its
 * workflow as a child of this run's, and takes its OutputNode's output. The child is cancelled with
 * the parent (its cancel is awaited, so both end CANCELED) and by a parent that closes otherwise.
 * A child that fails, is declined or is cancelled on its own fails the node naming the child run.
 */
export async function runSubworkflow(
  parentRunId: string,
  node: GraphNode,
  input: Record<string, unknown>,
  task: SubworkflowTaskHooks,
  dryRun?: DryRun,
): Promise<NodeState> {
  const plan = await recordActivity(node)({ parentRunId, node, input });
  if (plan.kind === 'refused') return { status: 'FAILED', error: `The child run did not start: ${plan.reason}` };
  const childRun = plan.runId;
  task.waitingFor(node.id, childRun);
  let result: SpurRunResult;
  try {
    const child = await startChild<(...args: unknown[]) => Promise<SpurRunResult>>(plan.workflowType, {
      ...childRunOptions(plan),
      // A dry run's child is dry too: the eval's row acts through no workflow it calls. (Its nodes
      // are not the recorded run's: they hand on stubs.)
      ...(dryRun ? { args: [{ ...(plan.args[0] as SpurRunInput), dryRun: childDryRun(dryRun) }] } : {}),
      parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
      cancellationType: ChildWorkflowCancellationType.WAIT_CANCELLATION_COMPLETED,
    });
    result = await child.result();
  } catch (err) {
    // The parent itself is being cancelled: so was the child; the run records its cancel.
    if (isCancellation(err) && CancellationScope.current().consideredCancelled) throw err;
    task.waitingFor(node.id, null);
    const how = isCancellation(err) ? 'was canceled' : `failed: ${failureMessage(err)}`;
    return { status: 'FAILED', error: `Child run ${childRun} ${how}` };
  }
  task.waitingFor(node.id, null);
  if (result.status === 'COMPLETED') {
    const output = plan.outputNodeId ? result.outputsById[plan.outputNodeId] : undefined;
    return { status: 'COMPLETED', output: output ?? {} };
  }
  const how = result.status === 'CANCELED' ? 'was canceled' : 'failed';
  return { status: 'FAILED', error: `Child run ${childRun} ${how}: ${result.message ?? result.status}` };
}

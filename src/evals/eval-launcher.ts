import { workspaceAttribute, workspaceShare } from '../db/workspace-scope';
import { type Client, WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { createEvalRecords } from '../db/eval-records';
import type { EvalRunDoc, Models, RunDoc } from '../db/models';
import { SpurError } from '../errors';
import type { KnownAtLaunch, RunLauncher } from '../runs/launcher';
import type { BatchRunInput } from '../contracts/batch-contract';
import type { EvalRunInput } from '../contracts/eval-contract';
import type { DryRun } from '../engine/dry-run';
import { WorkflowType, evalWorkflowId } from '../contracts/workflow-names';

export interface EvalLauncherDeps {
  models: Models;
  launcher: Pick<RunLauncher, 'plan'>;
  /** The client to start with: the api's own, or the one of the reconciler's activity. */
  temporal: () => Client;
  taskQueue: string;
  workflowIdPrefix: string;
  /** Priority and fairness keys on its starts (SPUR_FAIR_SHARE, src/contracts/work-share.ts). */
  fairShare: boolean;
}

export type EvalLaunchResult = { outcome: 'started' } | { outcome: 'failed'; message: string };

/**
 * Launches a recorded eval run: starts its workflow (`eval-<id>`), its batch planned from the
 * batch's record (the run launcher's plan). The one way an eval starts, whoever launches it — the
 * api right after recording it, the reconciler for an api that died before the launch. Its fixed workflow id makes a second start join
 * the first, and a closed eval is never started again. Temporal refusing the start throws
 * (`TEMPORAL_UNAVAILABLE`); what that does to the records is the caller's choice.
 */
export function createEvalLauncher(deps: EvalLauncherDeps) {
  const records = createEvalRecords(deps.models);

  return async function launchEval(run: EvalRunDoc, batch: RunDoc, known?: KnownAtLaunch): Promise<EvalLaunchResult> {
    const plan = await deps.launcher.plan(batch, known);
    if (plan.outcome !== 'ready') {
      // The plan failed the batch itself, saying why; an eval batch has no key, so it is never discarded.
      const message = plan.outcome === 'failed' ? plan.message : 'The eval could not start';
      await records.setStatus(run._id, 'FAILED', message);
      return { outcome: 'failed', message };
    }
    // Every row a workflow of its own (child mode): the rows show in Temporal, and cancel reaches each.
    const input: EvalRunInput = {
      evalRunId: run._id,
      batch: { ...(plan.start.args[0] as BatchRunInput), mode: 'child', dryRun: dryRunOf(run) },
    };
    try {
      await deps.temporal().workflow.start(WorkflowType.spurEvalRun, {
        workflowId: evalWorkflowId(run._id, deps.workflowIdPrefix),
        args: [input],
        workflowIdConflictPolicy: 'USE_EXISTING',
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
        staticSummary: `eval ${run._id}: ${run.eval_name} on ${run.workflow_id} v${run.workflow_version}, ${run.num_samples} rows`,
        typedSearchAttributes: workspaceAttribute(run.workspace_id),
        // Its batch (a child) and the judges' calls inherit it: an eval is bulk work.
        ...workspaceShare('bulk', deps, run.workspace_id),
      });
    } catch (err) {
      if (err instanceof WorkflowExecutionAlreadyStartedError) return { outcome: 'started' };
      throw new SpurError(
        'unavailable',
        'TEMPORAL_UNAVAILABLE',
        `Could not start the eval on Temporal: ${(err as Error).message}`,
      );
    }
    return { outcome: 'started' };
  };
}

export type EvalLauncher = ReturnType<typeof createEvalLauncher>;

/** An eval's rows are dry runs: nothing they would post, send or write leaves, but for the suite's live node types. */
function dryRunOf(run: EvalRunDoc): DryRun {
  const live = run.live_node_types ?? [];
  return {
    pauses: run.pauses ?? 'decline',
    ...(live.length > 0 ? { liveNodeTypes: [...live] } : {}),
    ...(run.source_run_column ? { recordedRunColumn: run.source_run_column } : {}),
  };
}

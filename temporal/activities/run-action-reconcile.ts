import { Context } from '@temporalio/activity';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type { ReconcilePageInput, RunActionReconcileResult } from '../../src/contracts/reconcile-contract';
import { runActionWorkflowId } from '../../src/contracts/run-action-contract';
import type { WorkQueue } from '../../src/contracts/work-share';
import type { Models, RunActionDoc } from '../../src/db/models';
import { createRunActions } from '../../src/db/run-actions';
import { DEFAULT_WORKSPACE, workspaceScope } from '../../src/db/workspace-scope';
import { startRunActionWorkflow } from '../../src/runs/run-action-start';
import { workflowStatus } from './workflow-status';

export interface RunActionReconcileDeps {
  models: Models;
  temporal: WorkQueue;
  /** SPUR_RUN_ACTION_RATE */
  runActionRate: number;
}

type Verdict = 'alive' | 'started' | 'abandoned';

/**
 * The reconciler's look at bulk actions: one RUNNING past the grace period whose workflow Temporal
 * does not have lost its api between recording and starting. Recorded in full, it is started as the
 * api would have (the same workflow id, so an api starting it at the same moment joins it); cut off
 * while its matches were being stored, it is ended FAILED with nothing acted on, since a partial
 * list would act on runs the caller never saw matched.
 */
export function createRunActionReconciler({ models, temporal, runActionRate }: RunActionReconcileDeps) {
  const actions = createRunActions(models);

  async function reconcile(action: RunActionDoc): Promise<Verdict> {
    if (action.recorded === false) return (await actions.abandonUnrecorded(action._id)) ? 'abandoned' : 'alive';
    if ((await workflowStatus(runActionWorkflowId(action._id, temporal.workflowIdPrefix))) !== null) return 'alive';
    try {
      await startRunActionWorkflow(Context.current().client.workflow, action, {
        ...temporal,
        rate: runActionRate,
      });
      return 'started';
    } catch (err) {
      // Its workflow ran and closed meanwhile (a lagging answer above): nothing to start.
      if (err instanceof WorkflowExecutionAlreadyStartedError) return 'alive';
      throw err;
    }
  }

  return {
    async reconcileRunActions(page: ReconcilePageInput): Promise<RunActionReconcileResult> {
      const ctx = Context.current();
      const running = await actions.runningPage(new Date(Date.now() - page.graceMs), page.after, page.pageSize);
      const result: RunActionReconcileResult = {
        checked: running.length,
        started: 0,
        abandoned: 0,
        next: running.length === page.pageSize ? (running.at(-1)?._id ?? null) : null,
      };
      for (const action of running) {
        // Started in the action's own workspace: its workflow's attribute and queue keys say whose it is.
        const verdict = await workspaceScope.run(action.workspace_id ?? DEFAULT_WORKSPACE, () => reconcile(action));
        if (verdict !== 'alive') {
          result[verdict]++;
          ctx.log.info(`reconciler: bulk action ${action._id} ${verdict}`);
        }
        ctx.heartbeat(action._id);
      }
      return result;
    },
  };
}

import type { HeldDeliveries } from '../../db/held-deliveries';
import type { WorkflowPauses } from '../../db/workflow-pauses';
import { ConflictError } from '../../errors';
import { runCaller } from '../../runs/run-caller';
import type { HeldRelease } from '../webhooks/held-release';
import type { PauseWorkflowInput, PauseWorkflowResponse, ResumeWorkflowResponse } from './workflow-pause.schemas';
import { shownPause } from './workflow-pause-view';
import type { WorkflowService } from './workflows.service';

export interface WorkflowPauseDeps {
  workflows: Pick<WorkflowService, 'load'>;
  pauses: WorkflowPauses;
  held: Pick<HeldDeliveries, 'count' | 'removeOfWorkflow'>;
  releaseHeld: HeldRelease;
}

/**
 * Pausing a workflow: no run of it starts (the recorder refuses them, schedules' fires are
 * skipped), runs already going on are left alone, and its webhook deliveries are held or refused.
 */
export function createWorkflowPauseService(deps: WorkflowPauseDeps) {
  return {
    async pause(workflowId: string, body: PauseWorkflowInput): Promise<PauseWorkflowResponse> {
      await deps.workflows.load(workflowId);
      const pause = await deps.pauses.pause(workflowId, {
        reason: body.reason ?? null,
        since: new Date(),
        by: runCaller()?.name ?? null,
        holdWebhooks: body.hold_webhooks,
      });
      return { workflow_id: workflowId, paused: shownPause(pause, await deps.held.count(workflowId)) };
    },

    /**
     * Held deliveries start first, oldest first, while the pause still stands, so none is
     * overtaken by a delivery arriving meanwhile (that one is held behind them); then the pause is
     * lifted, and what was held between the last page and the lift starts too. A resume that dies
     * midway leaves the workflow paused with the rest held: resuming again goes on from there, and
     * each delivery still starts once (held-release.ts).
     */
    async resume(workflowId: string): Promise<ResumeWorkflowResponse> {
      await deps.workflows.load(workflowId);
      const paused = (await deps.pauses.of(workflowId)) !== null;
      if (!paused && (await deps.held.count(workflowId)) === 0)
        throw new ConflictError(`Workflow ${workflowId} is not paused`, 'WORKFLOW_NOT_PAUSED');
      let released = await deps.releaseHeld(workflowId);
      await deps.pauses.resume(workflowId);
      released += await deps.releaseHeld(workflowId);
      return { workflow_id: workflowId, paused: null, released_deliveries: released };
    },

    /** A deleted workflow's pause and held deliveries go with it (its triggers are gone first). */
    async removeOfWorkflow(workflowId: string): Promise<void> {
      await deps.held.removeOfWorkflow(workflowId);
      await deps.pauses.removeOfWorkflow(workflowId);
    },
  };
}

export type WorkflowPauseService = ReturnType<typeof createWorkflowPauseService>;

import { trusted } from 'mongoose';
import { ConflictError } from '../errors';
import { isDuplicateKeyError } from './ids';
import type { Models, WorkflowPauseDoc } from './models';
import { settingsCache } from './settings-cache';

/** A workflow's pause as answers show it (the held deliveries are counted by db/held-deliveries.ts). */
export interface WorkflowPause {
  reason: string | null;
  since: Date;
  by: string | null;
  holdWebhooks: boolean;
}

const pauseOf = (doc: WorkflowPauseDoc): WorkflowPause => ({
  reason: doc.reason ?? null,
  since: doc.since,
  by: doc.by ?? null,
  holdWebhooks: doc.hold_webhooks,
});

/** "paused: "deploy freeze" (since …, by alice)": the words every refusal and answer use for a pause. */
export function describePause(pause: WorkflowPause): string {
  const reason = pause.reason ? `: "${pause.reason}"` : '';
  const by = pause.by ? `, by ${pause.by}` : '';
  return `paused${reason} (since ${pause.since.toISOString()}${by})`;
}

/**
 * A start refused because its workflow is paused: the detail PySpur's web UI shows names the pause,
 * its reason, and what lifts it.
 */
export class WorkflowPausedError extends ConflictError {
  constructor(workflowId: string, pause: WorkflowPause) {
    super(
      `Workflow ${workflowId} is ${describePause(pause)}: no run of it starts until it is resumed (POST /api/wf/${workflowId}/resume/)`,
      'WORKFLOW_PAUSED',
    );
  }
}

/**
 * The one writer of workflow pauses. Inserts and deletes only, so pausing twice and resuming twice
 * are decided by the `_id` index alone, on FerretDB too (whose updates are read-then-write).
 */
export function createWorkflowPauses(models: Models) {
  const { WorkflowPause: Pause } = models;
  const cache = settingsCache(models);

  async function of(workflowId: string): Promise<WorkflowPause | null> {
    const doc = await Pause.findById(workflowId).lean<WorkflowPauseDoc>();
    return doc ? pauseOf(doc) : null;
  }

  return {
    of,

    /** The pauses of the workflows among `workflowIds` that are paused, by workflow id. */
    async ofMany(workflowIds: string[]): Promise<Map<string, WorkflowPause>> {
      if (workflowIds.length === 0) return new Map();
      // Built here from stored ids; trusted() keeps sanitizeFilter from neutralising it.
      const docs = await Pause.find({ _id: trusted({ $in: workflowIds }) }).lean<WorkflowPauseDoc[]>();
      return new Map(docs.map((d) => [d._id, pauseOf(d)]));
    },

    /**
     * Whether the workflow may be paused, from this process's settings cache (a pause or resume
     * anywhere reaches it within SETTINGS_CHECK_MS, and a pause is answered only after that):
     * false is final for a start checking after a pause's answer; true is a hint that refuseStarts,
     * which reads the pause, decides.
     */
    mayBePaused: (workflowId: string): Promise<boolean> =>
      cache.get('workflow-pause', workflowId, async () => (await of(workflowId)) !== null),

    /** Throws WorkflowPausedError (409) while the workflow is paused. */
    async refuseStarts(workflowId: string): Promise<void> {
      const pause = await of(workflowId);
      if (pause) throw new WorkflowPausedError(workflowId, pause);
    },

    /**
     * Pauses the workflow; a workflow already paused is a 409 naming its pause. Answers once every
     * process's cache has seen the pause, so a start that checks mayBePaused after the answer
     * finds it.
     */
    async pause(workflowId: string, pause: WorkflowPause): Promise<WorkflowPause> {
      try {
        await Pause.create({
          _id: workflowId,
          reason: pause.reason,
          since: pause.since,
          by: pause.by,
          hold_webhooks: pause.holdWebhooks,
        });
        await cache.changed();
        await cache.reachedEverywhere();
        return pause;
      } catch (err) {
        if (!isDuplicateKeyError(err)) throw err;
        const held = await of(workflowId);
        if (!held) throw err;
        throw new ConflictError(`Workflow ${workflowId} is already ${describePause(held)}`, 'WORKFLOW_ALREADY_PAUSED');
      }
    },

    /** Lifts the pause; false when the workflow was not paused. */
    async resume(workflowId: string): Promise<boolean> {
      const resumed = (await Pause.deleteOne({ _id: workflowId })).deletedCount > 0;
      await cache.changed();
      return resumed;
    },

    async removeOfWorkflow(workflowId: string): Promise<void> {
      await Pause.deleteOne({ _id: workflowId });
      await cache.changed();
    },
  };
}

export type WorkflowPauses = ReturnType<typeof createWorkflowPauses>;

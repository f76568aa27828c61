import { WorkflowNotFoundError } from '@temporalio/client';
import { trusted } from 'mongoose';
import { fromJsonText } from '../../db/json-text';
import type { PauseDoc, RunDoc } from '../../db/models';
import { SpurError, BadRequestError } from '../../errors';
import { type Page, pageBounds } from '../../db/paging';
import { runWorkflowId } from '../../contracts/workflow-names';
import { toPauseResponse } from './pause-records';
import { createApprovalDeliveries } from '../../db/runs/approval-deliveries';
import { isFinalStatus } from '../../engine/statuses';
import { type PauseServiceDeps, createPauseActions, loadRun } from './pause-actions';
import { createDeciders } from './deciders';

const CANCELLABLE = new Set(['PAUSED', 'RUNNING', 'PENDING']);

/** The api's pauses: decisions (pause-actions.ts), the inbox and a run's pause history, and cancelling a run. */
export function createPauseService(deps: PauseServiceDeps) {
  const { models, runRecords, reader, versionById, temporal, workflowIdPrefix } = deps;
  const { Pause, Workflow } = models;
  const deliveries = createApprovalDeliveries(models);
  const handle = (runId: string) => temporal.workflow.getHandle(runWorkflowId(runId, workflowIdPrefix));

  async function waitForStatus(runId: string, done: (status: string) => boolean, ms: number): Promise<RunDoc> {
    const deadline = Date.now() + ms;
    for (;;) {
      const run = await loadRun(runRecords, runId);
      if (done(run.status) || Date.now() > deadline) return run;
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  return {
    ...createPauseActions(deps),
    /** Who a decision is by (deciders.ts). */
    deciders: createDeciders(deps.users),

    async history(runId: string, page: Page) {
      await loadRun(runRecords, runId);
      const { skip, limit } = pageBounds(page);
      const pauses = await Pause.find({ run_id: runId })
        .sort({ pause_time: -1, _id: -1 })
        .skip(skip)
        .limit(limit)
        .lean<PauseDoc[]>();
      const sent = await deliveries.ofPauses(pauses.map((p) => p._id));
      return pauses.map((p) => toPauseResponse(p, sent.get(p._id)));
    },

    async paused(page: Page) {
      const { skip, limit } = pageBounds(page);
      const runs = await runRecords.pausedPage(skip, limit);
      // The page's open pauses in one query (FerretDB scans the collection for any but an `_id` lookup), newest first.
      const [expanded, open] = await Promise.all([
        reader.expand(runs),
        Pause.find({ run_id: trusted({ $in: runs.map((r) => r._id) }), resume_time: null })
          .sort({ pause_time: -1 })
          .lean<PauseDoc[]>(),
      ]);
      const sent = await deliveries.ofPauses(open.map((p) => p._id));
      const currentOf = new Map<string, PauseDoc>();
      for (const pause of open) if (!currentOf.has(pause.run_id)) currentOf.set(pause.run_id, pause);
      const items = await Promise.all(
        runs.map(async (run, i) => {
          const current = currentOf.get(run._id);
          const version = run.workflow_version_id ? await versionById(run.workflow_version_id) : null;
          if (!current || !version) return null;
          // The inbox names the workflow (PySpur sends the bare definition and its UI shows `undefined`).
          const workflow = await Workflow.findById(run.workflow_id, { name: 1 }).lean<{ name: string }>();
          const definition = fromJsonText(version.definition) as Record<string, unknown>;
          return {
            run: expanded[i],
            current_pause: toPauseResponse(current, sent.get(current._id)),
            workflow: { ...definition, name: workflow?.name ?? version.name },
          };
        }),
      );
      return items.filter((item) => item !== null);
    },

    /** Cancels the run's workflow (activities stop through their heartbeats) and answers with the final state. */
    async cancel(runId: string) {
      const run = await loadRun(runRecords, runId);
      if (!CANCELLABLE.has(run.status)) {
        throw new BadRequestError(
          `Run is in state RunStatus.${run.status} and cannot be canceled.Only PAUSED or RUNNING runs can be canceled.`,
        );
      }
      let workflowGone = false;
      try {
        await handle(runId).cancel();
        // Temporal accepts a cancel of a workflow that has already closed (e.g. terminated by an
        // operator) without an error; then no workflow will ever record it.
        workflowGone = (await handle(runId).describe()).status.name !== 'RUNNING';
      } catch (err) {
        if (!(err instanceof WorkflowNotFoundError))
          throw new SpurError(
            'unavailable',
            'TEMPORAL_UNAVAILABLE',
            `Could not cancel the run: ${(err as Error).message}`,
          );
        workflowGone = true;
      }
      // A run no worker has picked up has no writer yet (the workflow, when it starts and sees the
      // cancel, leaves a final status as it is); a run whose workflow is gone never will have one.
      // Either way the cancel is recorded here.
      if (run.status === 'PENDING' || workflowGone) {
        await runRecords.cancelWithoutWorkflow(runId, workflowGone ? ['PENDING', 'RUNNING', 'PAUSED'] : ['PENDING']);
      }
      await waitForStatus(runId, isFinalStatus, 10_000);
      return reader.get(runId);
    },
  };
}

export type PauseService = ReturnType<typeof createPauseService>;

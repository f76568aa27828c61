import { trusted } from 'mongoose';
import { fromJsonText } from '../../db/json-text';
import type { PauseDoc, RunDoc } from '../../db/models';
import { BadRequestError } from '../../errors';
import { type Page, pageBounds } from '../../db/paging';
import { CANCELLABLE, createRunCancel } from '../../runs/run-cancel';
import { toPauseResponse } from './pause-records';
import { createApprovalDeliveries } from '../../db/runs/approval-deliveries';
import { isFinalStatus } from '../../engine/statuses';
import { type PauseServiceDeps, createPauseActions, loadRun } from './pause-actions';
import { createDeciders } from './deciders';

/** The api's pauses: decisions (pause-actions.ts), the inbox and a run's pause history, and cancelling a run. */
export function createPauseService(deps: PauseServiceDeps) {
  const { models, runRecords, reader, versionById, temporal, workflowIdPrefix } = deps;
  const { Pause, Workflow } = models;
  const deliveries = createApprovalDeliveries(models);
  const cancelRun = createRunCancel({ runRecords, temporal: () => temporal, workflowIdPrefix });

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

    /** Cancels the run's workflow (runs/run-cancel.ts) and answers with the final state. */
    async cancel(runId: string) {
      const run = await loadRun(runRecords, runId);
      if (!CANCELLABLE.has(run.status)) {
        throw new BadRequestError(
          `Run is in state RunStatus.${run.status} and cannot be canceled.Only PAUSED or RUNNING runs can be canceled.`,
        );
      }
      await cancelRun(run);
      await waitForStatus(runId, isFinalStatus, 10_000);
      return reader.get(runId);
    },
  };
}

export type PauseService = ReturnType<typeof createPauseService>;

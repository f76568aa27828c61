import { fromJsonText } from '../../db/json-text';
import type { RunDoc } from '../../db/models';
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
  const { Workflow } = models;
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
    deciders: createDeciders(deps.users, deps.members),

    async history(runId: string, page: Page) {
      const run = await loadRun(runRecords, runId);
      const { skip, limit } = pageBounds(page);
      const pauses = await runRecords.pausePageOf(run, skip, limit);
      const sent = await deliveries.ofPauses(pauses.map((p) => p._id));
      return pauses.map((p) => toPauseResponse(p, sent.get(p._id)));
    },

    async paused(page: Page) {
      const { skip, limit } = pageBounds(page);
      const runs = await runRecords.pausedPage(skip, limit);
      // Each run's newest open pause.
      const [expanded, currentOfRun] = await Promise.all([
        reader.expand(runs),
        Promise.all(runs.map(async (run) => (await runRecords.openPausesOf(run)).at(-1))),
      ]);
      const sent = await deliveries.ofPauses(currentOfRun.flatMap((p) => (p ? [p._id] : [])));
      const items = await Promise.all(
        runs.map(async (run, i) => {
          const current = currentOfRun[i];
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

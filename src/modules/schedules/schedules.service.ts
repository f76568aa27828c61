import { randomUUID } from 'node:crypto';
import { insertWithNewId } from '../../db/ids';
import { fromJsonText, toJsonText } from '../../db/json-text';
import type { Models, ScheduleDoc } from '../../db/models';
import { type Page, pageBounds } from '../../db/paging';
import { createRunLookups } from '../../db/runs/run-lookups';
import { createScheduleFires } from '../../db/schedule-fires';
import { createScheduleSkips } from '../../db/schedule-skips';
import { createWorkflowPauses } from '../../db/workflow-pauses';
import type { WorkflowVersions } from '../../db/workflow-versions';
import type { DefinitionLimits } from '../../config/settings';
import { ConflictError, NotFoundError, RequestValidationError } from '../../errors';
import { checkWithinLimits, resolveRunInputs, storedRunDefinition } from '../../runs/inputs';
import type { RunLauncher } from '../../runs/launcher';
import type { RunReader } from '../../runs/reader';
import type { ScheduledRunRecorder } from '../../runs/scheduled-runs';
import type { WorkflowService } from '../workflows/workflows.service';
import { type CallbackService, shownCallback } from '../callbacks/callbacks.service';
import type { BackfillInput, ScheduleInput, ScheduleResponse, ScheduleUpdate } from './schedules.schemas';
import type { TemporalSchedules } from './temporal-schedules';

export interface ScheduleServiceDeps {
  models: Models;
  workflows: Pick<WorkflowService, 'load'>;
  versions: Pick<WorkflowVersions, 'ensureVersion'>;
  temporal: TemporalSchedules;
  recordScheduledRun: ScheduledRunRecorder;
  launcher: Pick<RunLauncher, 'launch'>;
  reader: Pick<RunReader, 'recorded'>;
  definitionLimits: DefinitionLimits;
  /** Checks and seals the callback its runs get, as start_run's. */
  callbacks: Pick<CallbackService, 'replace'>;
}

/** Most runs one backfill may start, counted from the schedule's own fire times in the range. */
const MAX_BACKFILL_FIRES = 1000;
const RECENT_RUNS = 10;

const notFoundSchedule = () => new NotFoundError('Schedule not found', 'SCHEDULE_NOT_FOUND');

/**
 * Spur schedules: the document (what runs start with) is written here only, and its Temporal
 * Schedule (when) follows every change before the answer. A schedule's document is written first
 * and removed last; a fire that finds it closing or missing records nothing.
 */
export function createScheduleService(deps: ScheduleServiceDeps) {
  const { Schedule } = deps.models;
  const fires = createScheduleFires(deps.models);
  const skips = createScheduleSkips(deps.models);
  const pauses = createWorkflowPauses(deps.models);
  const runs = createRunLookups(deps.models);
  const idTaken = async (id: string) => (await Schedule.exists({ _id: id })) !== null;

  async function load(id: string): Promise<ScheduleDoc> {
    const doc = await Schedule.findById(id).lean<ScheduleDoc>();
    if (!doc) throw notFoundSchedule();
    return doc;
  }

  /** Inputs checked as start_run checks them (400 naming the problem); a pinned schedule pins the version now. */
  async function checked(workflowId: string, inputs: Record<string, Record<string, unknown>>, version: string) {
    const workflow = await deps.workflows.load(workflowId);
    const definition = storedRunDefinition(workflow.definition);
    checkWithinLimits(definition, deps.definitionLimits);
    resolveRunInputs(definition, inputs);
    return version === 'pinned' ? (await deps.versions.ensureVersion(workflow))._id : null;
  }

  async function respond(doc: ScheduleDoc): Promise<ScheduleResponse> {
    const [next, recent, skipped] = await Promise.all([
      deps.temporal.nextTimes(doc._id, doc.paused),
      runs.recentOfTrigger(doc._id, RECENT_RUNS),
      skips.recent(doc._id),
    ]);
    return {
      id: doc._id,
      workflow_id: doc.workflow_id,
      cron: doc.cron ?? null,
      interval_seconds: doc.interval_seconds ?? null,
      timezone: doc.timezone,
      initial_inputs: fromJsonText<Record<string, Record<string, unknown>>>(doc.initial_inputs) ?? {},
      overlap: doc.overlap,
      catchup_window_seconds: doc.catchup_window_seconds,
      paused: doc.paused,
      version: doc.version,
      pinned_version_id: doc.pinned_version_id ?? null,
      note: doc.note ?? null,
      callback: shownCallback(doc.callback),
      next_run_times: next.map((d) => d.toISOString()),
      recent_runs: recent.map((r) => ({
        run_id: r._id,
        scheduled_time: r.trigger?.scheduled_time ? r.trigger.scheduled_time.toISOString() : null,
        status: r.status,
      })),
      skipped_fires: skipped.map((f) => ({
        scheduled_time: f.scheduledTime.toISOString(),
        reason: f.reason,
        skipped_at: f.skippedAt.toISOString(),
      })),
      created_at: doc.created_at.toISOString(),
      updated_at: doc.updated_at.toISOString(),
    };
  }

  /**
   * Closed to fires first, so none records a run from then on; then the Temporal Schedule, so none
   * starts; then the recordings already under way finish, so their runs exist before the answer
   * (a workflow's delete removes them next, with its other runs).
   */
  async function removeOne(doc: ScheduleDoc): Promise<void> {
    await fires.close(doc._id);
    await deps.temporal.remove(doc._id);
    await fires.drain(doc._id);
    await Schedule.deleteOne({ _id: doc._id });
    await fires.forget(doc._id);
    await skips.removeOfSchedule(doc._id);
  }

  return {
    async create(workflowId: string, body: ScheduleInput): Promise<ScheduleResponse> {
      const pinned = await checked(workflowId, body.initial_inputs, body.version);
      const callback = await deps.callbacks.replace(body.callback, null);
      const now = new Date();
      const doc = await insertWithNewId(deps.models.conn, 'schedule', idTaken, async (id, seq) => {
        const fresh: ScheduleDoc = {
          _id: id,
          seq,
          workflow_id: workflowId,
          cron: body.cron ?? null,
          interval_seconds: body.interval_seconds ?? null,
          timezone: body.timezone,
          initial_inputs: toJsonText(body.initial_inputs),
          overlap: body.overlap,
          catchup_window_seconds: body.catchup_window_seconds,
          paused: body.paused,
          version: body.version,
          pinned_version_id: pinned,
          note: body.note ?? null,
          callback,
          created_at: now,
          updated_at: now,
        };
        const made = await Schedule.create(fresh);
        // The insert stamped it with the caller's workspace: its Temporal Schedule's fires run there.
        return { ...fresh, workspace_id: made.workspace_id };
      });
      try {
        await deps.temporal.create(doc);
      } catch (err) {
        await Schedule.deleteOne({ _id: doc._id });
        throw err;
      }
      return respond(doc);
    },

    async get(id: string): Promise<ScheduleResponse> {
      return respond(await load(id));
    },

    async list(page: Page, workflowId?: string): Promise<ScheduleResponse[]> {
      if (workflowId !== undefined) await deps.workflows.load(workflowId);
      const { skip, limit } = pageBounds(page);
      const docs = await Schedule.find(workflowId === undefined ? {} : { workflow_id: workflowId })
        .sort({ seq: 1 })
        .skip(skip)
        .limit(limit)
        .lean<ScheduleDoc[]>();
      return Promise.all(docs.map(respond));
    },

    async update(id: string, body: ScheduleUpdate): Promise<ScheduleResponse> {
      const doc = await load(id);
      const timing =
        body.cron != null
          ? { cron: body.cron, interval_seconds: null }
          : body.interval_seconds != null
            ? { cron: null, interval_seconds: body.interval_seconds }
            : {};
      const merged = { ...doc, ...withoutUndefined(body), ...timing };
      if ((merged.cron == null) === (merged.interval_seconds == null))
        throw new RequestValidationError([
          { type: 'value_error', loc: ['body', 'cron'], msg: 'set cron or interval_seconds', input: null },
        ]);
      const inputs =
        body.initial_inputs ?? fromJsonText<Record<string, Record<string, unknown>>>(doc.initial_inputs) ?? {};
      const pinned = await checked(doc.workflow_id, inputs, merged.version);
      const callback = await deps.callbacks.replace(body.callback, doc.callback ?? null);
      const next: ScheduleDoc = {
        ...merged,
        callback,
        initial_inputs: toJsonText(inputs),
        pinned_version_id:
          merged.version === 'pinned'
            ? body.version === 'pinned' || !doc.pinned_version_id
              ? pinned
              : doc.pinned_version_id
            : null,
        updated_at: new Date(),
      };
      await deps.temporal.replace(next);
      await Schedule.replaceOne({ _id: id }, next);
      return respond(next);
    },

    async setPaused(id: string, paused: boolean): Promise<ScheduleResponse> {
      const doc = await load(id);
      await deps.temporal.setPaused(id, paused);
      const next = { ...doc, paused, updated_at: new Date() };
      await Schedule.updateOne({ _id: id }, { $set: { paused, updated_at: next.updated_at } });
      return respond(next);
    },

    async remove(id: string): Promise<void> {
      await removeOne(await load(id));
    },

    /** Every schedule of a workflow being deleted: nothing fires after the answer. */
    async removeOfWorkflow(workflowId: string): Promise<void> {
      for (const doc of await Schedule.find({ workflow_id: workflowId }).lean<ScheduleDoc[]>()) await removeOne(doc);
    },

    /** One run now, whatever the schedule's times and overlap policy: answered as start_run answers. */
    async trigger(id: string) {
      const doc = await load(id);
      // A client's start like any other: refused while the workflow is paused, not a skipped fire.
      await pauses.refuseStarts(doc.workflow_id);
      const recorded = await deps.recordScheduledRun(doc._id, new Date(), `manual-${doc._id}-${randomUUID()}`);
      if (recorded.kind === 'gone') throw new NotFoundError(`Nothing to run: ${recorded.reason}`, 'SCHEDULE_GONE');
      if (recorded.kind === 'skipped') throw new ConflictError(recorded.reason, 'WORKFLOW_PAUSED');
      const created = await deps.reader.recorded(recorded.run._id);
      if (recorded.run.status === 'PENDING') await deps.launcher.launch(recorded.run, recorded.known);
      return created;
    },

    async backfill(id: string, body: BackfillInput) {
      const doc = await load(id);
      const start = new Date(body.start_time);
      const end = new Date(body.end_time);
      const fires = await deps.temporal.countFireTimes(id, start, end, MAX_BACKFILL_FIRES);
      if (fires > MAX_BACKFILL_FIRES)
        throw new RequestValidationError([
          {
            type: 'value_error',
            loc: ['body', 'end_time'],
            msg: `A backfill may start at most ${MAX_BACKFILL_FIRES} runs; this range has more fire times: shorten it`,
            input: body.end_time,
          },
        ]);
      await deps.temporal.backfill(id, start, end, doc.overlap);
      return { schedule_id: id, start_time: start.toISOString(), end_time: end.toISOString() };
    },
  };
}

function withoutUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

export type ScheduleService = ReturnType<typeof createScheduleService>;

import { createProviderBatchRecords } from '../db/provider-batch-records';
import { type FailedAttempt, createNodeAttempts } from '../db/runs/node-attempts';
import { createRunTaskReads } from '../db/runs/run-task-reads';
import { type QueryFilter, trusted } from 'mongoose';
import type { Models, RunDoc, WorkflowVersionDoc } from '../db/models';
import type { TaskRecord } from '../engine/run-contract';
import { answeredWithin } from '../answered-within';
import { notFound } from '../errors';
import { type Page, pageBounds } from '../db/paging';
import type { RunStatus, RunTriggerKind } from '../engine/statuses';
import { openingTasks } from './opening-tasks';
import { storedRunDefinition } from './inputs';
import { toRunResponse } from './response';
import type { RunResponse } from './response.schemas';

export interface RunFilter {
  workflowId?: string;
  status?: RunStatus;
  startFrom?: Date;
  startTo?: Date;
  parentOnly?: boolean;
  runType?: string;
  inputDatasetId?: string;
  /** What started the runs (`client`: no schedule, webhook or parent run). */
  trigger?: RunTriggerKind | 'client';
}

/** A workflow version by id (src/db/workflow-versions.ts, which keeps the recently read ones). */
export type VersionById = (id: string) => Promise<WorkflowVersionDoc | null>;

/** Whether Temporal has a run's workflow (run-workflow-status.ts): it has started, whether or not it has ended since. */
export type WorkflowStarted = (runId: string) => Promise<boolean>;

/** How long a read waits for Temporal to say whether a PENDING run has started before showing the record as it is. */
const STARTED_ASK_MS = 1_000;

/**
 * Reads of the run projection (written by the run workflows' activities).
 *
 * A run's record says PENDING until its workflow's first save, which may come with its first slow
 * node, seconds after the start on a busy worker. Started, the run is RUNNING (as PySpur's is once
 * its background task begins, and as Temporal lists it): a read asks Temporal about a PENDING record
 * and shows a started one RUNNING, with its tasks as the workflow starts them. PySpur's editor, which
 * polls a run once a second, stops polling when it reads a run PENDING, or RUNNING with no PENDING or
 * RUNNING task, and would never show the outputs.
 */
export function createRunReader(models: Models, versionById: VersionById, workflowStarted: WorkflowStarted) {
  const { Run } = models;
  const providerBatches = createProviderBatchRecords(models);
  const nodeAttempts = createNodeAttempts(models);
  const taskReads = createRunTaskReads(models);

  /**
   * The PENDING runs among `docs` whose workflow has started, but a dataset's (a batch's workflow
   * saves its parent RUNNING first thing, and its rows name their tasks otherwise). One that has
   * ended since its record was read counts too: a reader never sees a run go back to PENDING.
   */
  async function startedOf(docs: RunDoc[]): Promise<Set<string>> {
    const pending = docs.filter((r) => r.status === 'PENDING' && !r.input_dataset_id).map((r) => r._id);
    const started = await Promise.all(pending.map((id) => answeredWithin(workflowStarted(id), STARTED_ASK_MS, false)));
    return new Set(pending.filter((_, i) => started[i]));
  }

  /** A run as a reader sees it: a PENDING record whose workflow has started is RUNNING, its tasks those it starts with. */
  function shown(run: RunDoc, started: boolean, saved: TaskRecord[], version: WorkflowVersionDoc | null) {
    const status = started ? 'RUNNING' : run.status;
    const opening = saved.length === 0 && status === 'RUNNING' && !run.input_dataset_id && version;
    return {
      run: started ? { ...run, status } : run,
      tasks: opening ? openingTasks(run.seq, storedRunDefinition(version.definition)) : saved,
    };
  }

  /** `live`: PENDING records are looked up on Temporal (off for a run just recorded, not started yet). */
  async function expand(docs: RunDoc[], live = true): Promise<RunResponse[]> {
    const versionIds = [...new Set(docs.map((r) => r.workflow_version_id).filter((v): v is string => !!v))];
    // Versions and tasks at once, one `_id` lookup each: FerretDB pushes only those down.
    const [found, tasks, batches, marked, started] = await Promise.all([
      Promise.all(versionIds.map(versionById)),
      taskReads.ofDocs(docs),
      Promise.all(docs.map((r) => (r.llm_mode === 'provider_batch' ? providerBatches.ofRun(r._id) : null))),
      nodeAttempts.marked(docs.map((r) => r._id)),
      live ? startedOf(docs) : new Set<string>(),
    ]);
    // Failed attempts of the runs that had any, by the nodes their tasks name.
    const attempts = new Map<string, Map<string, FailedAttempt[]>>();
    await Promise.all(
      docs
        .filter((r) => marked.has(r._id))
        .map(async (r) => {
          const nodeIds = (tasks.get(r._id) ?? []).map((t) => t.node_id);
          attempts.set(r._id, await nodeAttempts.ofRun(r._id, nodeIds));
        }),
    );
    const versions = new Map(found.filter((v): v is WorkflowVersionDoc => !!v).map((v) => [v._id, v]));
    return docs.map((r, i) => {
      const version = versions.get(r.workflow_version_id ?? '') ?? null;
      const seen = shown(r, started.has(r._id), tasks.get(r._id) ?? [], version);
      return toRunResponse(seen.run, seen.tasks, version, batches[i] ?? null, attempts.get(r._id));
    });
  }

  async function one(runId: string, live: boolean): Promise<RunResponse> {
    const run = await Run.findById(runId).lean<RunDoc>();
    if (!run) throw notFound.run();
    return (await expand([run], live))[0] as RunResponse;
  }

  return {
    expand,
    get: (runId: string): Promise<RunResponse> => one(runId, true),
    /** A run just recorded, as its record says (PySpur's answer to a start: PENDING, no tasks). */
    recorded: (runId: string): Promise<RunResponse> => one(runId, false),
    async list(filter: RunFilter, page: Page): Promise<RunResponse[]> {
      const query: QueryFilter<RunDoc> = {};
      if (filter.workflowId !== undefined) query.workflow_id = filter.workflowId;
      if (filter.status !== undefined) query.status = filter.status;
      if (filter.parentOnly) query.parent_run_id = null;
      if (filter.runType !== undefined) query.run_type = filter.runType;
      if (filter.inputDatasetId !== undefined) query.input_dataset_id = filter.inputDatasetId;
      if (filter.trigger === 'client') query.trigger = null;
      else if (filter.trigger !== undefined) (query as Record<string, unknown>)['trigger.kind'] = filter.trigger;
      if (filter.startFrom || filter.startTo) {
        // Built here from validated dates; trusted() keeps sanitizeFilter from neutralising it.
        query.start_time = trusted({
          ...(filter.startFrom ? { $gte: filter.startFrom } : {}),
          ...(filter.startTo ? { $lte: filter.startTo } : {}),
        });
      }
      const { skip, limit } = pageBounds(page);
      const docs = await Run.find(query).sort({ start_time: -1, seq: -1 }).skip(skip).limit(limit).lean<RunDoc[]>();
      // Filtered by status, the records are shown as they are: every run listed has the status asked for.
      return expand(docs, filter.status === undefined);
    },
  };
}

export type RunReader = ReturnType<typeof createRunReader>;

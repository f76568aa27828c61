import { createProviderBatchRecords } from '../db/provider-batch-records';
import { type FailedAttempt, createNodeAttempts } from '../db/runs/node-attempts';
import { createRunTaskReads } from '../db/runs/run-task-reads';
import { type QueryFilter, trusted } from 'mongoose';
import type { Models, RunDoc, WorkflowVersionDoc } from '../db/models';
import { notFound } from '../errors';
import { type Page, pageBounds } from '../db/paging';
import type { RunStatus, RunTriggerKind } from '../engine/statuses';
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

/** Reads of the run projection (written by the run workflows' activities). */
export function createRunReader(models: Models, versionById: VersionById) {
  const { Run } = models;
  const providerBatches = createProviderBatchRecords(models);
  const nodeAttempts = createNodeAttempts(models);
  const taskReads = createRunTaskReads(models);

  async function expand(docs: RunDoc[]): Promise<RunResponse[]> {
    const versionIds = [...new Set(docs.map((r) => r.workflow_version_id).filter((v): v is string => !!v))];
    // Versions and tasks at once, one `_id` lookup each: FerretDB pushes only those down.
    const [found, tasks, batches, marked] = await Promise.all([
      Promise.all(versionIds.map(versionById)),
      taskReads.ofDocs(docs),
      Promise.all(docs.map((r) => (r.llm_mode === 'provider_batch' ? providerBatches.ofRun(r._id) : null))),
      nodeAttempts.marked(docs.map((r) => r._id)),
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
    return docs.map((r, i) =>
      toRunResponse(
        r,
        tasks.get(r._id) ?? [],
        versions.get(r.workflow_version_id ?? '') ?? null,
        batches[i] ?? null,
        attempts.get(r._id),
      ),
    );
  }

  return {
    expand,
    async get(runId: string): Promise<RunResponse> {
      const run = await Run.findById(runId).lean<RunDoc>();
      if (!run) throw notFound.run();
      return (await expand([run]))[0] as RunResponse;
    },
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
      return expand(await Run.find(query).sort({ start_time: -1, seq: -1 }).skip(skip).limit(limit).lean<RunDoc[]>());
    },
  };
}

export type RunReader = ReturnType<typeof createRunReader>;

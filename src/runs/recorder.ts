import { metrics } from '../metrics/metrics';
import { fromJsonText } from '../db/json-text';
import type { Models, RunDoc, WorkflowDoc, WorkflowVersionDoc } from '../db/models';
import { createOutputFiles } from '../db/output-files';
import type { RunRepository } from '../db/runs/run-repository';
import type { Values } from '../db/values';
import type { WorkflowVersions } from '../db/workflow-versions';
import type { WorkflowPauses } from '../db/workflow-pauses';
import { OPEN_RUN_STATUSES } from '../engine/statuses';
import { runCaller } from './run-caller';
import { RUN_KINDS, type RunFields, type StoredParts, recordFields } from './run-kinds';
import { storeClientValues } from './values';

type Inputs = Record<string, Record<string, unknown>>;

/**
 * A keyed request's side of its Idempotency-Key: the run is recorded first (tied to the key's
 * record id), then the key is claimed naming it, then its workflow is launched. Recording before
 * claiming means the key never names a run that does not exist; a run whose claim failed is
 * discarded unstarted, and the launcher starts a keyed run only if its key names it.
 */
export interface RunClaim {
  keyId: string;
  /** Claims the key for the recorded run; throws (after discarding the run) when another request holds it. */
  claim(runId: string): Promise<void>;
  /** The run's workflow has started. */
  started(): Promise<void>;
}

/**
 * One run to record, whatever started it: its kind (RUN_KINDS) says what differs, the rest is the
 * request's data. Everything a client can get wrong is checked before it is made.
 */
export interface RunRequest extends Omit<RunFields, 'idempotencyKey'> {
  /** The workflow as it is now (pinned as a version here), or a version already chosen. */
  version: { current: WorkflowDoc } | { pinned: WorkflowVersionDoc };
  /** The run's initial inputs: the client's, stored under the run's id (large values by reference). */
  inputs: Inputs | null;
  claim?: RunClaim;
  /** Called just before the insert (a schedule's fire checks it is still in time). */
  beforeInsert?: () => void;
  /** Recorded FAILED at once, saying why (a schedule whose inputs no longer fit its workflow). */
  failedBecause?: string;
  /**
   * A webhook delivery held while its workflow was paused, recorded by the workflow's resume: the
   * one run recorded while the pause still stands (the resume lifts it once all held have started).
   */
  releasesHeld?: boolean;
}

export interface RecordedRun {
  run: RunDoc;
  version: WorkflowVersionDoc;
  /** Its initial inputs as stored (large values by reference). */
  initialInputs: Inputs;
}

export interface RunRecorderDeps {
  models: Models;
  values: Values;
  runRecords: Pick<RunRepository, 'create' | 'failWithoutWorkflow' | 'discardUnstarted'>;
  versions: Pick<WorkflowVersions, 'ensureVersion'>;
  pauses: Pick<WorkflowPauses, 'refuseStarts' | 'mayBePaused'>;
}

/**
 * The one recorder of runs: pins the version, stores the run's values (and a batch's output file)
 * under its new id, inserts its record (PENDING) with all its workflow will need, and claims its
 * key. The api, the schedules' worker and the evals all record through it; the launcher then starts
 * the workflow from the record alone. So it is here that a paused workflow refuses every start
 * (WorkflowPausedError, 409), whatever kind of run it would have been.
 */
export function createRunRecorder(deps: RunRecorderDeps) {
  const outputFiles = createOutputFiles(deps.models);

  async function store(runId: string, request: RunRequest): Promise<StoredParts> {
    const rules = RUN_KINDS[request.kind];
    const outputFileId = rules.outputFile ? (await outputFiles.create(runId, `output_${runId}.jsonl`)).id : null;
    const given = request.inputs ?? {};
    if (request.rerun) {
      // Only the client's new values are stored here; the original's are references already.
      const { overrides: asked, inputNodeId } = request.rerun;
      const overrides = asked ? await storeClientValues(deps.values, runId, asked, 'input_overrides') : null;
      const initial = inputNodeId && overrides ? { [inputNodeId]: overrides } : given;
      return { initialInputs: initial, overrides, outputFileId };
    }
    const initialInputs = rules.storedAs ? await storeClientValues(deps.values, runId, given, rules.storedAs) : given;
    return { initialInputs, outputFileId };
  }

  async function record(request: RunRequest): Promise<RecordedRun> {
    const workflowId = 'pinned' in request.version ? request.version.pinned.workflow_id : request.version.current._id;
    const pausable = !request.releasesHeld;
    // Before recording, only where the workflow may be paused (the cache's hint): the read after
    // the insert decides, and spares the common start a read.
    if (pausable && (await deps.pauses.mayBePaused(workflowId))) await deps.pauses.refuseStarts(workflowId);
    const version =
      'pinned' in request.version ? request.version.pinned : await deps.versions.ensureVersion(request.version.current);
    const fields = { ...request, idempotencyKey: request.claim?.keyId ?? null };
    const run = await deps.runRecords.create(async (id) => {
      const stored = await store(id, request);
      request.beforeInsert?.(); // the insert follows at once
      return recordFields(fields, version, stored, runCaller());
    });
    // Asked again after the insert: a pause is answered only once every process's cache has it
    // (workflow-pauses.ts), so a run inserted after a pause's answer always finds it, and none
    // starts once the pause has been answered. Not paused: no read.
    if (pausable && (await deps.pauses.mayBePaused(workflowId))) await refuseIfPausedMeanwhile(run._id, workflowId);
    await request.claim?.claim(run._id);
    metrics.runsStarted.inc({ run_type: run.run_type });
    const initialInputs = fromJsonText<Inputs>(run.initial_inputs) ?? {};
    if (request.failedBecause === undefined) return { run, version, initialInputs };
    await deps.runRecords.failWithoutWorkflow(run._id, OPEN_RUN_STATUSES, request.failedBecause);
    return { run: { ...run, status: 'FAILED' }, version, initialInputs };
  }

  async function refuseIfPausedMeanwhile(runId: string, workflowId: string): Promise<void> {
    try {
      await deps.pauses.refuseStarts(workflowId);
    } catch (err) {
      await deps.runRecords.discardUnstarted(runId);
      throw err;
    }
  }

  return { record };
}

export type RunRecorder = ReturnType<typeof createRunRecorder>;

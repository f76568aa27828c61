import { fromJsonText } from '../db/json-text';
import type { RunDoc, WorkflowDoc, WorkflowVersionDoc } from '../db/models';
import type { RunRepository } from '../db/runs/run-repository';
import type { WorkflowVersions } from '../db/workflow-versions';
import type { DefinitionLimits } from '../config/settings';
import type { GraphNode, RunDefinition } from '../engine/run-contract';
import { OPEN_RUN_STATUSES } from '../engine/statuses';
import { ConflictError, RequestValidationError, notFound } from '../errors';
import { expectStarted } from './client-runs';
import { runnableDefinition } from './inputs';
import type { RunLauncher } from './launcher';
import type { RunReader } from './reader';
import type { RunClaim, RunRecorder } from './recorder';
import { RerunRefused, type RerunSource, rerunExtras, rerunSourceOf } from './rerun-launch';
import type { RerunInput } from './rerun.schemas';
import type { RunResponse } from './response.schemas';

export interface RerunDeps {
  runRecords: Pick<RunRepository, 'recordOf' | 'tasksIn'>;
  workflows: { load(id: string): Promise<WorkflowDoc> };
  versions: Pick<WorkflowVersions, 'ensureVersion' | 'byId'>;
  recorder: RunRecorder;
  launcher: RunLauncher;
  reader: RunReader;
  definitionLimits: DefinitionLimits;
}

type Inputs = Record<string, Record<string, unknown>>;

/**
 * Reruns an ended run from one of its nodes: a new run of the same workflow (the version it ran,
 * or the current definition) whose nodes not downstream of the start keep the original outcomes.
 * Everything a client can get wrong is checked before the new record exists.
 */
export function createReruns(deps: RerunDeps) {
  const { runRecords } = deps;

  async function definitionFor(
    original: RunDoc,
    version: RerunInput['version'],
  ): Promise<{ version: WorkflowVersionDoc; name: string; definition: RunDefinition; inputNode: GraphNode }> {
    let pinned: WorkflowVersionDoc | null;
    if (version === 'current')
      pinned = await deps.versions.ensureVersion(await deps.workflows.load(original.workflow_id));
    else pinned = original.workflow_version_id ? await deps.versions.byId(original.workflow_version_id) : null;
    if (!pinned)
      throw invalid('version', `The version run ${original._id} ran is gone; rerun with version 'current'`, version);
    return { version: pinned, name: pinned.name, ...runnableDefinition(pinned.definition, deps.definitionLimits) };
  }

  /** Checks the request and records the rerun (PENDING); `recordAndLaunch` then launches its workflow. */
  async function record(runId: string, body: RerunInput, runType: string, claim?: RunClaim) {
    const original = await runRecords.recordOf(runId);
    if (!original) throw notFound.run();
    refuseOpen(original, 'rerun');
    if (original.rows_total !== null && original.rows_total !== undefined) {
      throw invalid(
        'from_node_id',
        `Run ${runId} is a batch: its nodes ran in its rows; rerun a row (GET /api/run/?parent_only=false)`,
        body.from_node_id,
      );
    }
    const { version, name, definition, inputNode } = await definitionFor(original, body.version);
    const originalTasks = (await runRecords.tasksIn([original])).get(runId) ?? [];
    const fromInput = body.from_node_id === inputNode.id;
    const source: RerunSource = {
      fromNodeId: body.from_node_id,
      initialInputs:
        fromInput && body.input_overrides
          ? { [inputNode.id]: body.input_overrides }
          : fromJsonText<Inputs>(original.initial_inputs),
      inputOverrides: body.input_overrides,
    };
    refusedAs422(body, () => rerunExtras(definition, source, originalTasks));

    // A rerun stands alone: a batch row's rerun is not part of its batch.
    const { run } = await deps.recorder.record({
      kind: 'rerun',
      runType,
      version: { pinned: version },
      inputs: fromJsonText<Inputs>(original.initial_inputs),
      rerun: {
        of: original._id,
        fromNodeId: body.from_node_id,
        overrides: body.input_overrides,
        inputNodeId: fromInput ? inputNode.id : null,
      },
      ...(claim ? { claim } : {}),
    });
    return { run, name, definition, originalTasks };
  }

  return {
    /** `claim`: the key the new run is recorded under (a bulk action's, so a retried step makes one run). */
    async recordAndLaunch(runId: string, body: RerunInput, runType: string, claim?: RunClaim): Promise<RunResponse> {
      const { run, name, definition, originalTasks } = await record(runId, body, runType, claim);
      // Answered as created (PENDING), like start_run: read before the workflow can change it.
      const created = await deps.reader.recorded(run._id);
      // Planned again from the record: its stored inputs hold large values by reference.
      const plan = rerunExtras(definition, rerunSourceOf(run) as RerunSource, originalTasks);
      expectStarted(await deps.launcher.launch(run, { workflowName: name, definition, ...plan }), run._id);
      await claim?.started();
      return created;
    },
  };
}

export type Reruns = ReturnType<typeof createReruns>;

/** 409 unless the run has ended: a run shows FAILED as soon as a node fails while other branches go on, so only its end time makes it final. */
export function refuseOpen(run: RunDoc, verb: 'rerun' | 'retried'): void {
  if (!OPEN_RUN_STATUSES.includes(run.status) && run.end_time) return;
  const still = OPEN_RUN_STATUSES.includes(run.status)
    ? run.status
    : `${run.status} but still running (other branches have not ended)`;
  throw new ConflictError(
    `Run ${run._id} is still ${still}: only an ended run (COMPLETED, FAILED or CANCELED) can be ${verb}`,
    'RUN_STILL_OPEN',
  );
}

function refusedAs422(body: RerunInput, check: () => unknown): void {
  try {
    check();
  } catch (err) {
    if (!(err instanceof RerunRefused)) throw err;
    throw invalid(err.field, err.message, body[err.field]);
  }
}

function invalid(field: keyof RerunInput, msg: string, input: unknown): RequestValidationError {
  return new RequestValidationError([{ type: 'value_error', loc: ['body', field], msg: `Value error, ${msg}`, input }]);
}

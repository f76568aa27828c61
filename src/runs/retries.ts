import { fromJsonText } from '../db/json-text';
import type { RunRepository } from '../db/runs/run-repository';
import type { WorkflowVersions } from '../db/workflow-versions';
import { BadRequestError, notFound } from '../errors';
import { expectStarted } from './client-runs';
import type { RunLauncher } from './launcher';
import type { RunClaim, RunRecorder } from './recorder';
import { refuseOpen } from './reruns';

export interface RetryDeps {
  runRecords: Pick<RunRepository, 'recordOf'>;
  versions: Pick<WorkflowVersions, 'byId'>;
  recorder: RunRecorder;
  launcher: RunLauncher;
}

type Inputs = Record<string, Record<string, unknown>>;

/**
 * Runs an ended run again as it was first asked for: a new run of the same version with the same
 * initial inputs (the original's stored ones: large values stay stored once, under the original),
 * recorded by the one recorder and launched by the launcher. A batch is refused: its rows are runs
 * of their own.
 */
export function createRetries(deps: RetryDeps) {
  return async function retry(runId: string, claim?: RunClaim): Promise<string> {
    const original = await deps.runRecords.recordOf(runId);
    if (!original) throw notFound.run();
    refuseOpen(original, 'retried');
    if (original.rows_total !== null && original.rows_total !== undefined)
      throw new BadRequestError(`Run ${runId} is a batch: retry its rows, or start the batch again`, 'RETRY_REFUSED');
    const version = original.workflow_version_id ? await deps.versions.byId(original.workflow_version_id) : null;
    if (!version) throw new BadRequestError(`The version run ${runId} ran is gone`, 'RETRY_REFUSED');
    const { run } = await deps.recorder.record({
      kind: 'retry',
      runType: original.run_type,
      version: { pinned: version },
      inputs: fromJsonText<Inputs>(original.initial_inputs),
      ...(claim ? { claim } : {}),
    });
    expectStarted(await deps.launcher.launch(run), run._id);
    await claim?.started();
    return run._id;
  };
}

export type Retry = ReturnType<typeof createRetries>;

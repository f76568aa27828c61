import { type LlmMode, providerBatchRefusal } from '../../engine/provider-batch-plan';
import type { Client } from '@temporalio/client';
import { createDatasetReader } from '../../db/dataset-reader';
import type { EvalRecords } from '../../db/eval-records';
import type { EvalRunDoc, EvalSuiteDoc, Models, RunDoc, WorkflowVersionDoc } from '../../db/models';
import type { RunRepository } from '../../db/runs/run-repository';
import type { WorkflowPauses } from '../../db/workflow-pauses';
import type { DefinitionLimits } from '../../config/settings';
import { OPEN_RUN_STATUSES } from '../../engine/statuses';
import { SpurError } from '../../errors';
import { leafOutputVariables } from '../../evals/output-variable';
import { inputColumns } from '../../runs/batch-plan';
import { checkRunnable, checkWithinLimits, storedRunDefinition } from '../../runs/inputs';
import type { KnownAtLaunch, RunLauncher } from '../../runs/launcher';
import type { RunRecorder } from '../../runs/recorder';
import { createEvalLauncher } from '../../evals/eval-launcher';
import { evalNotFound, invalidField } from './eval-errors';

export interface EvalRecorderDeps {
  models: Models;
  records: EvalRecords;
  runRecords: Pick<RunRepository, 'failWithoutWorkflow'>;
  recorder: RunRecorder;
  launcher: RunLauncher;
  temporal: Client;
  taskQueue: string;
  workflowIdPrefix: string;
  /** Priority and fairness keys on its starts (SPUR_FAIR_SHARE, src/contracts/work-share.ts). */
  fairShare: boolean;
  definitionLimits: DefinitionLimits;
  /** A comparison checks both starts before writing anything: a paused workflow is refused there. */
  pauses: Pick<WorkflowPauses, 'refuseStarts'>;
}

export interface EvalStart {
  suite: EvalSuiteDoc;
  version: WorkflowVersionDoc;
  outputVariable: string;
  numSamples: number;
  concurrency: number;
  /** `provider_batch`: the rows' model calls go out as provider batches. */
  llmMode?: LlmMode;
  comparisonId?: string;
}

/** An eval whose records are written and whose workflow may not have been launched yet. */
export interface RecordedEval {
  run: EvalRunDoc;
  batch: RunDoc;
  known: KnownAtLaunch;
}

/**
 * Records and launches eval runs: everything a client can get wrong is checked first (output
 * variable, dataset, columns), then the batch's record (the one run recorder) and the eval's are
 * written, and the eval's workflow is launched, running the batch as its child.
 */
export function createEvalRecorder(deps: EvalRecorderDeps) {
  const datasets = createDatasetReader(deps.models);
  const launchEval = createEvalLauncher({ ...deps, temporal: () => deps.temporal });

  /** The checks of a start, with no record written: what a comparison runs for both versions first. */
  async function check(start: EvalStart) {
    const { suite, version, outputVariable } = start;
    await deps.pauses.refuseStarts(version.workflow_id);
    const definition = storedRunDefinition(version.definition);
    const inputNode = checkRunnable(definition);
    checkWithinLimits(definition, deps.definitionLimits);
    const refused = start.llmMode === 'provider_batch' ? providerBatchRefusal(definition.nodes) : null;
    if (refused) throw invalidField('llm_mode', refused, start.llmMode);
    const variables = leafOutputVariables(definition).map((v) => v.prefixed_variable);
    if (!variables.includes(outputVariable))
      throw invalidField(
        'output_variable',
        `Workflow ${version.workflow_id} (version ${version.version}) has no output variable '${outputVariable}' (its output variables: ${variables.join(', ') || 'none'})`,
        outputVariable,
      );
    const dataset = await datasets.getDataset(suite.dataset_id).catch(() => {
      throw evalNotFound.dataset(suite.dataset_id);
    });
    if (!dataset.columns.includes(suite.answer_column))
      throw invalidField(
        'eval_name',
        `Dataset ${dataset.id} has no answer column '${suite.answer_column}'`,
        suite.name,
      );
    const fields = inputColumns(inputNode, dataset.columns);
    const missing = fields.find((c) => !dataset.columns.includes(c));
    if (missing !== undefined)
      throw invalidField(
        'workflow_id',
        `The workflow's input field '${missing}' is not a column of dataset ${dataset.id}`,
        missing,
      );
    if (fields.includes(suite.answer_column))
      throw invalidField(
        'workflow_id',
        `The workflow's input field '${suite.answer_column}' would be fed the expected answer`,
        suite.answer_column,
      );
    return { definition, dataset, rows: Math.min(start.numSamples, dataset.row_count) };
  }

  /**
   * The batch's record and the eval's, both PENDING: from here the eval starts whatever happens to
   * this process, since the reconciler launches a recorded eval whose workflow never started.
   */
  async function record(start: EvalStart): Promise<RecordedEval> {
    const { definition, dataset, rows } = await check(start);
    const { version, suite } = start;
    // The batch's record: a batch run of the pinned version over the first `rows` rows.
    const { run: batch } = await deps.recorder.record({
      kind: 'eval',
      version: { pinned: version },
      inputs: {},
      dataset: { id: dataset.id, rows, miniBatchSize: start.concurrency, llmMode: start.llmMode ?? 'online' },
    });
    const run = await deps.records.createRun(
      {
        suite_id: suite._id,
        eval_name: suite.name,
        workflow_id: version.workflow_id,
        workflow_version_id: version._id,
        workflow_version: version.version,
        output_variable: start.outputVariable,
        num_samples: rows,
        batch_run_id: batch._id,
        comparison_id: start.comparisonId ?? null,
        pauses: suite.pauses ?? 'decline',
        live_node_types: [...(suite.live_node_types ?? [])],
        source_run_column: suite.source_run_column ?? null,
      },
      new Date(),
    );
    return { run, batch, known: { workflowName: version.name, definition } };
  }

  /** Launches a recorded eval's workflow; Temporal refusing it fails the eval and its batch (the client is answered 503). */
  async function launch({ run, batch, known }: RecordedEval): Promise<EvalRunDoc> {
    let started;
    try {
      started = await launchEval(run, batch, known);
    } catch (err) {
      if (err instanceof SpurError && err.code === 'TEMPORAL_UNAVAILABLE')
        await abandon({ run, batch, known }, err.message);
      throw err;
    }
    if (started.outcome !== 'started')
      throw new SpurError('invalid', 'EVAL_NOT_STARTED', `Eval run ${run._id} did not start: ${started.message}`);
    return run;
  }

  /** A recorded eval that will not start: failed with its batch, so no later pass starts it. */
  async function abandon({ run, batch }: RecordedEval, message: string): Promise<void> {
    await deps.records.setStatus(run._id, 'FAILED', message);
    await deps.runRecords.failWithoutWorkflow(batch._id, OPEN_RUN_STATUSES, message);
  }

  const recordAndLaunch = async (start: EvalStart) => launch(await record(start));

  return { check, record, launch, abandon, recordAndLaunch };
}

export type EvalRecorder = ReturnType<typeof createEvalRecorder>;

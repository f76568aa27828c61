import { BadRequestError } from '../../errors';
import { runCaller } from '../../runs/run-caller';
import { createDatasetReader } from '../../db/dataset-reader';
import { createOutputFileWriter } from '../output-files/output-file-writer';
import { checkRunnable, checkWithinLimits, storedRunDefinition } from '../../runs/inputs';
import { type RunStarterDeps, expectStarted } from './run-starter';
import { inputColumns } from '../../runs/batch-plan';
import type { BatchRunInput } from './runs.schemas';
import type { RunResponse } from '../../runs/response.schemas';
import type { RunClaim } from './idempotency';

/**
 * PySpur's `start_batch_run`, with its gaps closed: everything is checked (workflow,
 * dataset, columns) before the parent run exists; the parent is RUNNING while its workflow works
 * and knows its dataset (`input_dataset_id`) and output file from the start.
 */
export function createBatchStarter(deps: RunStarterDeps) {
  const { models, runRecords } = deps;
  const datasets = createDatasetReader(models);
  const outputFiles = createOutputFileWriter(models);

  return async function startBatch(
    workflowId: string,
    body: BatchRunInput,
    claim?: RunClaim,
    traceParent?: string | null,
  ): Promise<RunResponse> {
    const workflow = await deps.workflows.load(workflowId);
    const definition = storedRunDefinition(workflow.definition);
    const inputNode = checkRunnable(definition);
    checkWithinLimits(definition, deps.definitionLimits);
    const dataset = await datasets.getDataset(body.dataset_id);
    const missing = inputColumns(inputNode, dataset.columns).find((c) => !dataset.columns.includes(c));
    if (missing !== undefined)
      throw new BadRequestError(`Input field '${missing}' in input schema not found in the dataset`, 'MISSING_COLUMN');
    const callback = body.callback ? await deps.callbacks.prepare(body.callback) : null;
    const version = await deps.versions.ensureVersion(workflow);

    // The record holds all its workflow is started with (launcher.ts): dataset, rows, output file, mini-batch size.
    let outputFileId = '';
    const { doc: parent } = await runRecords.create(
      {
        workflowId: workflow._id,
        workflowVersionId: version._id,
        runType: 'batch',
        inputDatasetId: dataset.id,
        rows: { total: dataset.row_count, done: 0, failed: 0 },
        miniBatchSize: body.mini_batch_size,
        callback,
        idempotencyKey: claim?.keyId ?? null,
        startedBy: runCaller(),
        traceParent: traceParent ?? null,
      },
      {},
      async (id, none) => {
        outputFileId = (await outputFiles.createOutputFile(id, `output_${id}.jsonl`)).id;
        return none;
      },
      () => ({ initialInputs: {}, outputFileId }),
    );
    await claim?.claim(parent._id);
    expectStarted(await deps.launcher.launch(parent, { workflowName: workflow.name, definition }), parent._id);
    await claim?.started();
    return deps.reader.get(parent._id);
  };
}

export type BatchStarter = ReturnType<typeof createBatchStarter>;

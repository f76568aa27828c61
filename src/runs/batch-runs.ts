import { BadRequestError, RequestValidationError } from '../errors';
import { type LlmMode, providerBatchRefusal } from '../engine/provider-batch-plan';
import { createDatasetReader } from '../db/dataset-reader';
import type { Models, WorkflowDoc } from '../db/models';
import type { StoredCallback } from '../db/runs/run-documents';
import type { DefinitionLimits } from '../config/settings';
import { inputColumns } from './batch-plan';
import { expectStarted } from './client-runs';
import { runnableDefinition } from './inputs';
import type { RunLauncher } from './launcher';
import type { RunReader } from './reader';
import type { RunClaim, RunRecorder } from './recorder';
import type { RunResponse } from './response.schemas';

/** A batch request as the api validated it (BatchRunRequest); its callback is sealed by `prepareCallback`. */
export interface BatchRunBody<Callback> {
  dataset_id: string;
  mini_batch_size: number;
  llm_mode?: LlmMode;
  callback?: Callback | undefined;
}

export interface BatchRunDeps<Callback> {
  models: Models;
  workflows: { load(id: string): Promise<WorkflowDoc> };
  recorder: RunRecorder;
  launcher: RunLauncher;
  reader: RunReader;
  prepareCallback: (request: Callback) => Promise<StoredCallback>;
  definitionLimits: DefinitionLimits;
}

/**
 * PySpur's `start_batch_run`, with its gaps closed: everything is checked (workflow, dataset,
 * columns) before the parent run exists; the parent is RUNNING while its workflow works and knows
 * its dataset (`input_dataset_id`) and output file from the start.
 */
export function createBatchRuns<Callback>(deps: BatchRunDeps<Callback>) {
  const datasets = createDatasetReader(deps.models);

  return async function recordAndLaunchBatch(
    workflowId: string,
    body: BatchRunBody<Callback>,
    claim?: RunClaim,
    traceParent?: string | null,
  ): Promise<RunResponse> {
    const workflow = await deps.workflows.load(workflowId);
    const { definition, inputNode } = runnableDefinition(workflow.definition, deps.definitionLimits);
    const llmMode = body.llm_mode ?? 'online';
    const refused = llmMode === 'provider_batch' ? providerBatchRefusal(definition.nodes) : null;
    if (refused)
      throw new RequestValidationError([
        { type: 'value_error', loc: ['body', 'llm_mode'], msg: refused, input: llmMode },
      ]);
    const dataset = await datasets.getDataset(body.dataset_id);
    const missing = inputColumns(inputNode, dataset.columns).find((c) => !dataset.columns.includes(c));
    if (missing !== undefined)
      throw new BadRequestError(`Input field '${missing}' in input schema not found in the dataset`, 'MISSING_COLUMN');
    const callback = body.callback ? await deps.prepareCallback(body.callback) : null;
    // The record holds all its workflow is launched with: dataset, rows, output file, mini-batch size.
    const { run } = await deps.recorder.record({
      kind: 'batch',
      version: { current: workflow },
      inputs: {},
      dataset: { id: dataset.id, rows: dataset.row_count, miniBatchSize: body.mini_batch_size, llmMode },
      callback,
      ...(claim ? { claim } : {}),
      traceParent: traceParent ?? null,
    });
    expectStarted(await deps.launcher.launch(run, { workflowName: workflow.name, definition }), run._id);
    await claim?.started();
    return deps.reader.get(run._id);
  };
}

export type BatchRuns<Callback = unknown> = ReturnType<typeof createBatchRuns<Callback>>;

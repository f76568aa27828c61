import { fromJsonText } from '../../db/json-text';
import { BadRequestError } from '../../errors';
import type { BatchMode, BatchRunInput as BatchWorkflowInput } from '../../../temporal/shared/batch-contract';
import { ENGINE_NODE_TYPES } from '../../engine/node-kinds';
import type { CallbackEvent } from '../../engine/callback-events';
import type { GraphNode, RunDefinition } from '../../engine/run-contract';
import { WorkflowType } from '../../../temporal/shared/workflow-names';
import { createDatasetReader } from '../../db/dataset-reader';
import { createOutputFileWriter } from '../output-files/output-file-writer';
import type { WorkflowDefinition } from '../../definitions/definition.schema';
import { checkRunnable, checkWithinLimits, toRunDefinition } from '../../runs/inputs';
import { type RunStarterDeps, startRunWorkflow } from './run-starter';
import type { BatchRunInput } from './runs.schemas';
import type { RunResponse } from '../../runs/response.schemas';
import type { RunClaim } from './idempotency';

/**
 * `start_batch_run` (pyspur-facts §3.5 with the §11 fixes): everything is checked (workflow,
 * dataset, columns) before the parent run exists; the parent is RUNNING while its workflow works
 * and knows its dataset (`input_dataset_id`) and output file from the start.
 */
export function createBatchStarter(
  deps: RunStarterDeps & { batchHistoryEvents: number; batchChunkRows: number; batchRowMode: 'auto' | 'child' },
) {
  const { models, runRecords } = deps;
  const datasets = createDatasetReader(models);
  const outputFiles = createOutputFileWriter(models);

  return async function startBatch(workflowId: string, body: BatchRunInput, claim?: RunClaim): Promise<RunResponse> {
    const workflow = await deps.workflows.load(workflowId);
    const definition = toRunDefinition(fromJsonText<WorkflowDefinition>(workflow.definition) as WorkflowDefinition);
    const inputNode = checkRunnable(definition);
    checkWithinLimits(definition, deps.definitionLimits);
    const dataset = await datasets.getDataset(body.dataset_id);
    const columns = inputColumns(inputNode, dataset.columns);
    const missing = columns.find((c) => !dataset.columns.includes(c));
    if (missing !== undefined)
      throw new BadRequestError(`Input field '${missing}' in input schema not found in the dataset`, 'MISSING_COLUMN');
    const callback = body.callback ? await deps.callbacks.prepare(body.callback) : null;
    const version = await deps.versions.ensureVersion(workflow);

    const { doc: parent } = await runRecords.create(
      {
        workflowId: workflow._id,
        workflowVersionId: version._id,
        runType: 'batch',
        inputDatasetId: dataset.id,
        rows: { total: dataset.row_count, done: 0, failed: 0 },
        callback,
        idempotencyKey: claim?.keyId ?? null,
      },
      {},
      async (_id, none) => none,
    );
    await claim?.claim(parent._id);
    const outputFile = await outputFiles.createOutputFile(parent._id, `output_${parent._id}.jsonl`);
    await runRecords.setOutputFile(parent._id, outputFile.id);

    const input: BatchWorkflowInput = {
      parentRunId: parent._id,
      parentSeq: parent.seq,
      workflowIdPrefix: deps.workflowIdPrefix,
      workflowId: workflow._id,
      workflowVersionId: version._id,
      datasetId: dataset.id,
      outputFileId: outputFile.id,
      definition,
      inputNodeId: inputNode.id,
      columns,
      rowCount: dataset.row_count,
      miniBatchSize: body.mini_batch_size,
      mode: deps.batchRowMode === 'child' ? 'child' : batchMode(definition),
      historyEventsLimit: deps.batchHistoryEvents,
      chunkRows: deps.batchChunkRows,
      cursor: { next: 0, ok: 0, failed: 0 },
      ...(callback
        ? { callback: { events: callback.events as CallbackEvent[], workflowIdPrefix: deps.workflowIdPrefix } }
        : {}),
    };
    await startRunWorkflow(deps, parent._id, {
      type: WorkflowType.spurBatchRun,
      args: [input],
      workflowId: workflow._id,
      runType: 'batch',
      summary: `${workflow.name} (${workflow._id}) batch ${parent._id} over ${dataset.name} (${dataset.id}), ${dataset.row_count} rows`,
    });
    await claim?.started();
    return deps.reader.get(parent._id);
  };
}

/**
 * The columns a row feeds the InputNode: the keys of its `input_schema` (older configs) or
 * `output_schema` (current ones); a schema without fields takes every column.
 */
function inputColumns(inputNode: GraphNode, datasetColumns: string[]): string[] {
  const schema = inputNode.config.input_schema ?? inputNode.config.output_schema;
  const keys = schema !== null && typeof schema === 'object' && !Array.isArray(schema) ? Object.keys(schema) : [];
  return keys.length > 0 ? keys : datasetColumns;
}

/** Rows that can pause for a human need a workflow each; all others run in chunk activities. */
function batchMode(definition: RunDefinition): BatchMode {
  return definition.nodes.some((n) => n.node_type === ENGINE_NODE_TYPES.humanIntervention) ? 'child' : 'inline';
}
export type BatchStarter = ReturnType<typeof createBatchStarter>;

import { needsOwnWorkflow } from '../engine/node-kinds';
import { modelOf } from '../engine/model-calls';
import type { GraphNode, RunDefinition } from '../engine/run-contract';
import type { BatchMode } from '../contracts/batch-contract';

/**
 * The columns a row feeds the InputNode: the keys of its `input_schema` (older configs) or
 * `output_schema` (current ones); a schema without fields takes every column.
 */
export function inputColumns(inputNode: GraphNode, datasetColumns: string[]): string[] {
  const schema = inputNode.config.input_schema ?? inputNode.config.output_schema;
  const keys = schema !== null && typeof schema === 'object' && !Array.isArray(schema) ? Object.keys(schema) : [];
  return keys.length > 0 ? keys : datasetColumns;
}

/** Rows that can pause for a human, or wait for a timer or a callback, need a workflow each; all others run in chunk activities. */
export function batchMode(definition: RunDefinition, rowMode: 'auto' | 'child'): BatchMode {
  if (rowMode === 'child') return 'child';
  return needsOwnWorkflow(definition.nodes) ? 'child' : 'inline';
}

/** The models a definition's nodes call. */
export function modelsOf(definition: RunDefinition): string[] {
  return [...new Set(definition.nodes.flatMap((node) => modelOf(node) ?? []))];
}

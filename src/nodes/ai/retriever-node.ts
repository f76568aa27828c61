import { z } from 'zod';
import { extendConfig, fixedOutputDefaults } from '../base-config.js';
import { NodeExecutionError } from '../errors.js';
import { openObject } from '../shared-models.js';
import { renderTemplate } from '../templates.js';
import type { NodeExecutionContext, NodeInput, NodeTypeDefinition } from '../types.js';

const chunkMetadata = z.object({
  document_id: z.string(),
  chunk_id: z.string(),
  document_title: z.string().nullish(),
  page_number: z.number().int().nullish(),
  chunk_number: z.number().int().nullish(),
});

const output = z.object({
  results: z.array(z.object({ text: z.string(), score: z.number(), metadata: chunkMetadata })),
  total_results: z.number().int(),
});

const config = extendConfig({
  // PySpur describes the static output in the config but does not flag it as fixed.
  ...fixedOutputDefaults(output),
  has_fixed_output: z.boolean().default(false),
  vector_index_id: z.string().min(1),
  top_k: z.number().int().min(1).max(10).default(5),
  query_template: z.string().default('{{input_1}}'),
});

/** Queries the index with the rendered template; the worker's retriever does the work. */
async function retrieve(cfg: z.output<typeof config>, input: NodeInput, ctx: NodeExecutionContext) {
  if (!ctx.retrieve) throw new NodeExecutionError('Knowledge bases are not available on this worker');
  const query = (await renderTemplate(cfg.query_template, input, 'query_template')).trim();
  if (!query) throw new NodeExecutionError('query_template rendered an empty query');
  return ctx.retrieve({ indexId: cfg.vector_index_id, query, topK: cfg.top_k });
}

/** Queries a vector index with the rendered `query_template`. */
export const retrieverNode: NodeTypeDefinition<typeof config> = {
  name: 'RetrieverNode',
  displayName: 'Retriever',
  category: 'AI',
  visualTag: { acronym: 'RN', color: '#FFC107' },
  config,
  input: openObject(),
  output,
  execute: retrieve,
};

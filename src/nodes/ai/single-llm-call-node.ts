import { extendConfig } from '../base-config.js';
import { openObject } from '../shared-models.js';
import type { NodeTypeDefinition } from '../types.js';
import { llmCallShape } from './llm-fields.js';
import { executeSingleLlmCall } from './llm/single-call.js';
import { MODEL_CONSTRAINTS } from './model-constraints.js';

const config = extendConfig(llmCallShape());

/** One JSON-mode chat completion whose parsed reply must match `output_json_schema`. */
export const singleLlmCallNode: NodeTypeDefinition<typeof config> = {
  name: 'SingleLLMCallNode',
  displayName: 'Single LLM Call',
  description: 'Asks a language model once and returns its JSON answer.',
  category: 'AI',
  visualTag: { acronym: 'SLCN', color: '#007BFF' },
  config,
  input: openObject(),
  output: openObject(),
  modelConstraints: MODEL_CONSTRAINTS,
  execute: (cfg, input, ctx) => executeSingleLlmCall(cfg, input, ctx),
};

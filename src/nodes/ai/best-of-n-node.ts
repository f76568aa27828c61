import { z } from 'zod';
import { DEFAULT_RATING_PROMPT } from '../../engine/best-of-n';
import { dynamicOutputDefaults, extendConfig } from '../base-config.js';
import { openObject } from '../shared-models.js';
import type { NodeTypeDefinition } from '../types.js';
import { llmCallShape } from './llm-fields.js';
import { executeSingleLlmCall } from './llm/single-call.js';

const config = extendConfig({
  ...dynamicOutputDefaults({ response: { type: 'string' } }),
  ...llmCallShape(),
  input_map: z.record(z.string(), z.string()).nullish(),
  samples: z.number().int().min(1).max(10).default(3),
  rating_prompt: z.string().default(DEFAULT_RATING_PROMPT),
});

/**
 * Generates `samples` answers, has each rated with `rating_prompt`, keeps the best. The engine
 * runs that as steps (src/engine/best-of-n.ts); `execute` is one generation with this config.
 */
export const bestOfNNode: NodeTypeDefinition<typeof config> = {
  name: 'BestOfNNode',
  displayName: 'Best of N',
  category: 'AI',
  visualTag: { acronym: 'BONN', color: '#007BFF' },
  config,
  input: openObject(),
  output: openObject(),
  execute: (cfg, input, ctx) => executeSingleLlmCall(cfg, input, ctx),
};

import { z } from 'zod';
import { dynamicOutputDefaults, extendConfig } from '../base-config.js';
import { openObject } from '../shared-models.js';
import type { NodeTypeDefinition } from '../types.js';
import { llmCallShape } from './llm-fields.js';

const RATING_PROMPT =
  'Rate the following response on a scale from 0 to 10, where 0 is poor and 10 is excellent. ' +
  'Consider factors such as relevance, coherence, and helpfulness. Respond with only a number.';

const config = extendConfig({
  ...dynamicOutputDefaults({ response: { type: 'string' } }),
  ...llmCallShape(),
  input_map: z.record(z.string(), z.string()).nullish(),
  samples: z.number().int().min(1).max(10).default(3),
  rating_prompt: z.string().default(RATING_PROMPT),
});

/** Generates `samples` answers, has each rated with `rating_prompt`, keeps the best. */
export const bestOfNNode: NodeTypeDefinition<typeof config> = {
  name: 'BestOfNNode',
  displayName: 'Best of N',
  category: 'AI',
  visualTag: { acronym: 'BONN', color: '#007BFF' },
  config,
  input: openObject(),
  output: openObject(),
  executionKind: 'io',
};

import { z } from 'zod';
import { fixedOutputConfig } from '../base-config.js';
import { openObject } from '../shared-models.js';
import type { NodeTypeDefinition } from '../types.js';

const searchResult = z.object({
  title: z.string(),
  url: z.string(),
  content: z.string().nullish(),
  score: z.number().nullish(),
  published_date: z.string().nullish(),
  author: z.string().nullish(),
});

const output = z.object({ results: z.array(searchResult) });

const config = fixedOutputConfig(output, {
  query_template: z.string().default('{{input_1}}'),
  max_results: z.number().int().min(1).default(10),
  include_content: z.boolean().default(true),
  /** Per-result content length when `include_content` is on. */
  max_characters: z.number().int().min(1).default(1000),
});

/** Web search through Exa, optionally with page text. */
export const exaSearchNode: NodeTypeDefinition<typeof config> = {
  name: 'ExaSearchNode',
  displayName: 'ExaSearch',
  category: 'Search',
  visualTag: { acronym: 'ESN', color: '#FF7F50' },
  config,
  input: openObject(),
  output,
  logo: '/images/exa.png',
  categoryLabel: 'Search',
  executionKind: 'io',
};

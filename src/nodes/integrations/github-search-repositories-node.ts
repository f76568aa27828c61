import { z } from 'zod';
import { fixedOutputConfig } from '../base-config.js';
import { openObject } from '../shared-models.js';
import type { NodeTypeDefinition } from '../types.js';

const output = z.object({ repositories: z.string() });

const config = fixedOutputConfig(output, {
  query: z.string(),
  sort: z.string().default('stars'),
  order: z.string().default('desc'),
  per_page: z.number().int().default(5),
});

/** Searches GitHub repositories (output: JSON text). */
export const gitHubSearchRepositoriesNode: NodeTypeDefinition<typeof config> = {
  name: 'GitHubSearchRepositoriesNode',
  displayName: 'GitHubSearchRepositories',
  category: 'Integrations',
  visualTag: { acronym: 'GSRN', color: '#FFC107' },
  config,
  input: openObject(),
  output,
  logo: '/images/github.png',
  categoryLabel: 'GitHub',
  executionKind: 'io',
};

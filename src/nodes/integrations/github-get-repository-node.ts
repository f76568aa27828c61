import { z } from 'zod';
import { fixedOutputConfig } from '../base-config.js';
import { openObject } from '../shared-models.js';
import type { NodeTypeDefinition } from '../types.js';

const output = z.object({ repository_details: z.string() });

const config = fixedOutputConfig(output, {
  repo_name: z.string().default(''),
});

/** Fetches the details of one repository (output: JSON text). */
export const gitHubGetRepositoryNode: NodeTypeDefinition<typeof config> = {
  name: 'GitHubGetRepositoryNode',
  displayName: 'GitHubGetRepository',
  category: 'Integrations',
  visualTag: { acronym: 'GGRN', color: '#FA8072' },
  config,
  input: openObject(),
  output,
  logo: '/images/github.png',
  categoryLabel: 'GitHub',
  executionKind: 'io',
};

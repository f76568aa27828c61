import { z } from 'zod';
import { fixedOutputConfig } from '../base-config.js';
import { openObject } from '../shared-models.js';
import type { NodeTypeDefinition } from '../types.js';

const output = z.object({ repositories: z.string() });

const config = fixedOutputConfig(output, {});

/** Lists the token owner's repositories (output: JSON text). */
export const gitHubListRepositoriesNode: NodeTypeDefinition<typeof config> = {
  name: 'GitHubListRepositoriesNode',
  displayName: 'GitHubListRepositories',
  category: 'Integrations',
  visualTag: { acronym: 'GLRN', color: '#8CC63F' },
  config,
  input: openObject(),
  output,
  logo: '/images/github.png',
  categoryLabel: 'GitHub',
  executionKind: 'io',
};

import { z } from 'zod';
import { fixedOutputConfig } from '../base-config.js';
import { openObject } from '../shared-models.js';
import type { NodeTypeDefinition } from '../types.js';

const output = z.object({ pull_requests: z.string() });

const config = fixedOutputConfig(output, {
  repo_name: z.string().default(''),
  state: z.string().default('open'),
});

/** Lists pull requests of a repository (output: JSON text). */
export const gitHubListPullRequestsNode: NodeTypeDefinition<typeof config> = {
  name: 'GitHubListPullRequestsNode',
  displayName: 'GitHubListPullRequests',
  category: 'Integrations',
  visualTag: { acronym: 'GLPRN', color: '#8A2BE2' },
  config,
  input: openObject(),
  output,
  logo: '/images/github.png',
  categoryLabel: 'GitHub',
  executionKind: 'io',
};

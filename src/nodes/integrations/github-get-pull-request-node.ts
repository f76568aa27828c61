import { z } from 'zod';
import { fixedOutputConfig } from '../base-config.js';
import { openObject } from '../shared-models.js';
import type { NodeTypeDefinition } from '../types.js';

const output = z.object({ pull_request: z.string() });

const config = fixedOutputConfig(output, {
  repo_name: z.string().default(''),
  pr_number: z.string().default(''),
});

/** Fetches one pull request (output: JSON text). */
export const gitHubGetPullRequestNode: NodeTypeDefinition<typeof config> = {
  name: 'GitHubGetPullRequestNode',
  displayName: 'GitHubGetPullRequest',
  category: 'Integrations',
  visualTag: { acronym: 'GGPRN', color: '#17A2B8' },
  config,
  input: openObject(),
  output,
  logo: '/images/github.png',
  categoryLabel: 'GitHub',
  executionKind: 'io',
};

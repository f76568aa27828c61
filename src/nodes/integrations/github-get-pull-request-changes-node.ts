import { z } from 'zod';
import { fixedOutputConfig } from '../base-config.js';
import { openObject } from '../shared-models.js';
import type { NodeTypeDefinition } from '../types.js';

const output = z.object({ pull_request_changes: z.string() });

const config = fixedOutputConfig(output, {
  repo_name: z.string().default(''),
  pr_number: z.number().int().nullish(),
});

/** Fetches the changed files of a pull request (output: JSON text). */
export const gitHubGetPullRequestChangesNode: NodeTypeDefinition<typeof config> = {
  name: 'GitHubGetPullRequestChangesNode',
  displayName: 'GitHubGetPullRequestChanges',
  category: 'Integrations',
  visualTag: { acronym: 'GGPRCN', color: '#DC3545' },
  config,
  input: openObject(),
  output,
  logo: '/images/github.png',
  categoryLabel: 'GitHub',
  executionKind: 'io',
};

import { z } from 'zod';
import { fixedOutputConfig } from '../base-config.js';
import { openObject } from '../shared-models.js';
import type { NodeTypeDefinition } from '../types.js';

const output = z.object({ issue: z.string() });

const config = fixedOutputConfig(output, {
  repo_name: z.string().default(''),
  issue_title: z.string().default(''),
  body: z.string().nullish(),
});

/** Opens an issue (output: JSON text). */
export const gitHubCreateIssueNode: NodeTypeDefinition<typeof config> = {
  name: 'GitHubCreateIssueNode',
  displayName: 'GitHubCreateIssue',
  category: 'Integrations',
  visualTag: { acronym: 'GCIN', color: '#20C997' },
  config,
  input: openObject(),
  output,
  logo: '/images/github.png',
  categoryLabel: 'GitHub',
  executionKind: 'io',
};

import { z } from 'zod';
import { fixedOutputConfig } from '../base-config.js';
import { openObject } from '../shared-models.js';
import type { NodeTypeDefinition } from '../types.js';

const output = z.object({ subreddit_info: z.record(z.string(), z.unknown()) });

const config = fixedOutputConfig(output, {
  subreddit_name: z.string().default(''),
});

/** Fetches the description and settings of a subreddit. */
export const redditGetSubredditInfoNode: NodeTypeDefinition<typeof config> = {
  name: 'RedditGetSubredditInfoNode',
  displayName: 'RedditGetSubredditInfo',
  category: 'Integrations',
  visualTag: { acronym: 'RGSIN', color: '#FF00FF' },
  config,
  input: openObject(),
  output,
  logo: '/images/reddit.png',
  categoryLabel: 'Reddit',
  executionKind: 'io',
};

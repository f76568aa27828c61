import { z } from 'zod';
import { fixedOutputConfig } from '../base-config.js';
import { openObject } from '../shared-models.js';
import type { NodeTypeDefinition } from '../types.js';

const output = z.object({ subreddit_stats: z.record(z.string(), z.unknown()) });

const config = fixedOutputConfig(output, {
  subreddit: z.string().default(''),
});

/** Fetches activity figures of a subreddit. */
export const redditGetSubredditStatsNode: NodeTypeDefinition<typeof config> = {
  name: 'RedditGetSubredditStatsNode',
  displayName: 'RedditGetSubredditStats',
  category: 'Integrations',
  visualTag: { acronym: 'RGSSN', color: '#6F42C1' },
  config,
  input: openObject(),
  output,
  logo: '/images/reddit.png',
  categoryLabel: 'Reddit',
  executionKind: 'io',
};

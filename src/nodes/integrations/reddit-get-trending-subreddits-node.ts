import { z } from 'zod';
import { fixedOutputConfig } from '../base-config.js';
import { openObject } from '../shared-models.js';
import type { NodeTypeDefinition } from '../types.js';

const output = z.object({ trending_subreddits: z.array(z.record(z.string(), z.unknown())) });

const config = fixedOutputConfig(output, {
  limit: z.number().int().min(1).default(5),
});

/** Lists currently popular subreddits. */
export const redditGetTrendingSubredditsNode: NodeTypeDefinition<typeof config> = {
  name: 'RedditGetTrendingSubredditsNode',
  displayName: 'RedditGetTrendingSubreddits',
  category: 'Integrations',
  visualTag: { acronym: 'RGTSN', color: '#007BFF' },
  config,
  input: openObject(),
  output,
  logo: '/images/reddit.png',
  categoryLabel: 'Reddit',
  executionKind: 'io',
};

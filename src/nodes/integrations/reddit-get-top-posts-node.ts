import { z } from 'zod';
import { fixedOutputConfig } from '../base-config.js';
import { openObject } from '../shared-models.js';
import type { NodeTypeDefinition } from '../types.js';

const redditPost = z.object({
  title: z.string(),
  score: z.number().int(),
  url: z.string(),
  author: z.string(),
  created_utc: z.number(),
  num_comments: z.number().int(),
  permalink: z.string(),
  is_self: z.boolean(),
  selftext: z.string().nullish(),
});

const output = z.object({ top_posts: z.array(redditPost) });

const config = fixedOutputConfig(output, {
  subreddit: z.string().default(''),
  time_filter: z.enum(['hour', 'day', 'week', 'month', 'year', 'all']).default('week'),
  limit: z.number().int().min(1).default(10),
  only_self_posts: z.boolean().default(false),
});

/** Lists the top posts of a subreddit for a time window. */
export const redditGetTopPostsNode: NodeTypeDefinition<typeof config> = {
  name: 'RedditGetTopPostsNode',
  displayName: 'RedditGetTopPosts',
  category: 'Integrations',
  visualTag: { acronym: 'RGTPN', color: '#E83E8C' },
  config,
  input: openObject(),
  output,
  logo: '/images/reddit.png',
  categoryLabel: 'Reddit',
  executionKind: 'io',
};

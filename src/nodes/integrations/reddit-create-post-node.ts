import { z } from 'zod';
import { fixedOutputConfig } from '../base-config.js';
import { openObject } from '../shared-models.js';
import type { NodeTypeDefinition } from '../types.js';

const createdPost = z.object({
  id: z.string(),
  title: z.string(),
  url: z.string(),
  permalink: z.string(),
  created_utc: z.number(),
  author: z.string(),
  flair: z.string().nullish(),
});

const redditError = z.object({ error: z.string() });

const output = z.object({ post_info: z.union([createdPost, redditError]) });

const config = fixedOutputConfig(output, {
  subreddit: z.string().default(''),
  title: z.string().default(''),
  /** Text of a self post, URL of a link post */
  content: z.string().default(''),
  flair: z.string().nullish(),
  is_self: z.boolean().default(true),
  username: z.string().default(''),
  password: z.string().default(''),
});

/** Submits a post to a subreddit. */
export const redditCreatePostNode: NodeTypeDefinition<typeof config> = {
  name: 'RedditCreatePostNode',
  displayName: 'RedditCreatePost',
  category: 'Integrations',
  visualTag: { acronym: 'RCPN', color: '#17A2B8' },
  config,
  input: openObject(),
  output,
  logo: '/images/reddit.png',
  categoryLabel: 'Reddit',
  executionKind: 'io',
};

import { z } from 'zod';
import { fixedOutputConfig } from '../base-config.js';
import { openObject } from '../shared-models.js';
import type { NodeTypeDefinition } from '../types.js';

const output = z.object({ user_info: z.record(z.string(), z.unknown()) });

const config = fixedOutputConfig(output, {
  username: z.string().default(''),
});

/** Fetches the public profile of a Reddit user. */
export const redditGetUserInfoNode: NodeTypeDefinition<typeof config> = {
  name: 'RedditGetUserInfoNode',
  displayName: 'RedditGetUserInfo',
  category: 'Integrations',
  visualTag: { acronym: 'RGUIN', color: '#007BFF' },
  config,
  input: openObject(),
  output,
  logo: '/images/reddit.png',
  categoryLabel: 'Reddit',
  executionKind: 'io',
};

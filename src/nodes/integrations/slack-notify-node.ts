import { z } from 'zod';
import { fixedOutputConfig } from '../base-config.js';
import { openObject } from '../shared-models.js';
import type { NodeTypeDefinition } from '../types.js';

const output = z.object({ status: z.string() });

const config = fixedOutputConfig(output, {
  channel: z.string().default(''),
  mode: z.enum(['bot', 'user']).default('bot'),
  /** Jinja template over the node's input. */
  message: z.string().default(''),
});

/** Posts `message` to a Slack channel as the bot or the user. */
export const slackNotifyNode: NodeTypeDefinition<typeof config> = {
  name: 'SlackNotifyNode',
  displayName: 'SlackNotify',
  category: 'Integrations',
  visualTag: { acronym: 'SNN', color: '#FD7E14' },
  config,
  input: openObject(),
  output,
  logo: '/images/slack.png',
  categoryLabel: 'Slack',
  executionKind: 'io',
};

import { z } from 'zod';
import { integrationNode } from './http/integration-node.js';
import { serviceFailure } from './http/service-errors.js';
import { type ServiceContext, connect } from './http/service-client.js';
import { SERVICES } from './http/services.js';
import { renderTemplate } from '../templates.js';

const answer = z.looseObject({ ok: z.boolean(), error: z.string().optional() });

/**
 * Posts `text` to a Slack channel (or user) with chat.postMessage, as the bot or the user whose
 * token env management holds; the node and approval links both send through it.
 */
export async function postSlackMessage(
  ctx: ServiceContext,
  mode: 'bot' | 'user',
  channel: string,
  text: string,
): Promise<void> {
  const service = mode === 'user' ? SERVICES.slackUser : SERVICES.slackBot;
  const api = await connect(ctx, service);
  // Slack reports most failures as 200 with {"ok": false, "error": "channel_not_found"}.
  const reply = await api.post('/chat.postMessage', { channel, text }, answer);
  if (!reply.ok) throw serviceFailure(service, reply.error ?? 'ok: false');
}

/** Posts `message` (a template; empty: the whole input as JSON) with Slack's chat.postMessage. */
export const slackNotifyNode = integrationNode({
  name: 'SlackNotifyNode',
  acts: true,
  displayName: 'SlackNotify',
  category: 'Integrations',
  tag: 'SNN #FD7E14',
  logo: '/images/slack.png',
  categoryLabel: 'Slack',
  output: z.object({ status: z.string() }),
  config: {
    channel: z.string().default(''),
    mode: z.enum(['bot', 'user']).default('bot'),
    /** Jinja template over the node's input. */
    message: z.string().default(''),
  },
  async run(config, input, ctx) {
    const text = config.message.trim()
      ? await renderTemplate(config.message, input, 'message')
      : JSON.stringify(input, null, 2);
    await postSlackMessage(ctx, config.mode, config.channel, text);
    return { status: 'success' };
  },
});

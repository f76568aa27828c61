import { z } from 'zod';
import { NodeExecutionError } from '../errors.js';
import { pyJson } from '../json-text.js';
import { integrationNode, renderOrFirstString } from '../integrations/http/integration-node.js';
import { type ServiceContext, connect } from '../integrations/http/service-client.js';
import { SERVICES } from '../integrations/http/services.js';

export interface Email {
  from: string;
  to: string[];
  subject: string;
  text: string;
}

/** One address, or several written as a list: `['a@x.org', 'b@x.org']`. */
export function emailAddresses(text: string): string[] {
  const trimmed = text.trim();
  if (!(trimmed.startsWith('[') && trimmed.endsWith(']'))) return trimmed ? [trimmed] : [];
  return trimmed
    .slice(1, -1)
    .split(',')
    .map((a) =>
      a
        .trim()
        .replace(/^['"]|['"]$/g, '')
        .trim(),
    )
    .filter(Boolean);
}

/** The providers, by the node's `provider` field: request and the message id in the answer. */
const PROVIDERS = {
  async resend(ctx: ServiceContext, email: Email) {
    const api = await connect(ctx, SERVICES.resend);
    const sent = await api.post('/emails', email, z.looseObject({ id: z.string() }));
    return { message_id: sent.id, raw: { id: sent.id } };
  },
  async sendgrid(ctx: ServiceContext, email: Email) {
    const api = await connect(ctx, SERVICES.sendgrid);
    const res = await api.request({
      method: 'POST',
      path: '/v3/mail/send',
      json: {
        personalizations: [{ to: email.to.map((address) => ({ email: address })) }],
        from: { email: email.from },
        subject: email.subject,
        content: [{ type: 'text/plain', value: email.text }],
      },
    });
    const id = res.headers.get('x-message-id') ?? '';
    return { message_id: id, raw: { id, status_code: res.status } };
  },
} as const;

export type EmailProvider = keyof typeof PROVIDERS;

/** Sends a plain-text e-mail through the provider (its key and base URL from env management); the node and approval links both use it. */
export function sendEmail(ctx: ServiceContext, provider: EmailProvider, email: Email) {
  return PROVIDERS[provider](ctx, email);
}

/** Sends a plain-text email through Resend or SendGrid. PySpur gives it no logo or label. */
export const sendEmailNode = integrationNode({
  name: 'SendEmailNode',
  acts: true,
  displayName: 'Send Email',
  category: 'Tools',
  tag: 'SEN #FD7E14',
  output: z.object({ provider: z.string(), message_id: z.string(), status: z.string(), raw_response: z.string() }),
  config: {
    provider: z.enum(['resend', 'sendgrid']).default('resend'),
    from_template: z.string().default(''),
    to_template: z.string().default(''),
    subject_template: z.string().default(''),
    content_template: z.string().default(''),
  },
  async run(config, input, ctx) {
    const from = await renderOrFirstString(config.from_template, input, 'from_template');
    const to = emailAddresses(await renderOrFirstString(config.to_template, input, 'to_template'));
    if (!to.length) throw new NodeExecutionError('to_template names no recipient');
    const email = {
      from,
      to,
      subject: await renderOrFirstString(config.subject_template, input, 'subject_template'),
      text: await renderOrFirstString(config.content_template, input, 'content_template'),
    };
    const sent = await sendEmail(ctx, config.provider, email);
    const raw = { ...sent.raw, from, to, subject: email.subject };
    return { provider: config.provider, message_id: sent.message_id, status: 'success', raw_response: pyJson(raw) };
  },
});

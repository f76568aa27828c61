import type { Engine } from './engine';
import type { FakeServices, ServiceRequest } from './fake-services';
import { CREDENTIALS, fakeBases, setEnv } from './integration-runs';
import type { CallbackReceiver } from './callback-receiver';
import { eventually } from './python-runs';
import { input, l, n } from './graphs';

/** in → gate (a HumanInterventionNode asking `message`, with `config`) → after (its `x`). */
export function gated(config: Record<string, unknown>, message = 'Approve this?') {
  return {
    nodes: [
      input(),
      n('gate', 'HumanInterventionNode', { message, ...config }),
      n('after', 'OutputNode', { output_map: { x: 'gate.in.x' } }),
    ],
    links: [l('in', 'gate'), l('gate', 'after')],
  };
}

/** The approval links' base in tests: never contacted, links are rebased onto the test's api. */
export const PUBLIC_URL = 'https://approvals.example.test';

/** Points the api's Slack and Resend (e-mail) settings at the fake services, with their credentials. */
export async function connectMessaging(engine: Engine, fake: FakeServices): Promise<void> {
  const bases = fakeBases(fake);
  await setEnv(engine, {
    SLACK_API_BASE: bases.SLACK_API_BASE!,
    SLACK_BOT_TOKEN: CREDENTIALS.SLACK_BOT_TOKEN!,
    RESEND_API_BASE: bases.RESEND_API_BASE!,
    RESEND_API_KEY: CREDENTIALS.RESEND_API_KEY!,
  });
}

/** A link as one recipient received it. */
export interface ReceivedLink {
  channel: 'slack' | 'email' | 'webhook';
  to: string;
  link: string;
  /** The whole message (Slack text, e-mail text, webhook body). */
  message: any;
  /** When the fake received it (ms since the epoch, the test's clock). */
  at: number;
}

/** A message the service answered with an error (a scripted 503) was not received: only those it took count. */
const taken = (r: ServiceRequest) => r.status !== undefined && r.status < 300;

/** Every approval link the fakes received so far, in arrival order per channel. */
export function receivedLinks(fake: FakeServices, hooks?: CallbackReceiver): ReceivedLink[] {
  const links: ReceivedLink[] = [];
  for (const r of fake.to('slack', 'POST', /chat\.postMessage/).filter(taken)) {
    const m = /<(https?:\/\/[^|>]+)\|Review and decide>/.exec(r.body?.text ?? '');
    if (m) links.push({ channel: 'slack', to: r.body.channel, link: m[1]!, message: r.body.text, at: r.at });
  }
  for (const r of fake.to('resend', 'POST', /emails/).filter(taken)) {
    const m = /Review and decide: (\S+)/.exec(r.body?.text ?? '');
    if (m) links.push({ channel: 'email', to: r.body.to[0], link: m[1]!, message: r.body, at: r.at });
  }
  for (const h of hooks?.received ?? [])
    if (h.body?.approve_url)
      links.push({ channel: 'webhook', to: h.path, link: h.body.approve_url, message: h.body, at: h.at });
  return links;
}

/** Waits until `count` links for `to` (a Slack channel, an address, a webhook path) have arrived. */
export function linksFor(fake: FakeServices, to: string, count = 1, hooks?: CallbackReceiver, ms = 30_000) {
  return eventually(
    `${count} approval link(s) for ${to}`,
    () => {
      const mine = receivedLinks(fake, hooks).filter((l) => l.to === to);
      return mine.length >= count ? mine : undefined;
    },
    ms,
  );
}

/** What a link's token says (its payload, read without checking it): run, pause, user, channel, expiry (unix s). */
export function linkClaims(link: string): { r: string; p: string; u: string; c: string; e: number } {
  const token = new URL(link).pathname.split('/').pop() ?? '';
  return JSON.parse(Buffer.from(token.split('.')[0] ?? '', 'base64url').toString('utf8'));
}

/** The link's path on the test's api (`/approve/<token>`), its origin the api's. */
export function onApi(engine: Engine, link: string): string {
  const origin = new URL(engine.api.baseUrl).origin;
  return `${origin}${new URL(link).pathname}`;
}

export interface OpenedPage {
  status: number;
  html: string;
  headers: Headers;
  /** The nonce cookie the page set, and the nonce in its form. */
  cookie: string | null;
  nonce: string | null;
}

export async function openLink(url: string): Promise<OpenedPage> {
  const res = await fetch(url, { redirect: 'manual' });
  const html = await res.text();
  const setCookie = res.headers.get('set-cookie');
  return {
    status: res.status,
    html,
    headers: res.headers,
    cookie: setCookie ? setCookie.split(';')[0]! : null,
    nonce: /name="nonce" value="([^"]+)"/.exec(html)?.[1] ?? null,
  };
}

/** Presses a button of the page as a browser would: the form urlencoded, the page's cookie, this origin. */
export async function pressButton(
  url: string,
  page: Pick<OpenedPage, 'cookie' | 'nonce'>,
  action: string,
  fields: Record<string, string> = {},
  headers: Record<string, string> = {},
): Promise<{ status: number; html: string }> {
  const res = await fetch(url, {
    method: 'POST',
    redirect: 'manual',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      origin: new URL(url).origin,
      ...(page.cookie ? { cookie: page.cookie } : {}),
      ...headers,
    },
    body: new URLSearchParams({ nonce: page.nonce ?? '', action, ...fields }).toString(),
  });
  return { status: res.status, html: await res.text() };
}

/** A link of one recipient opened and decided in one go. */
export async function decideByLink(engine: Engine, link: string, action: string, fields: Record<string, string> = {}) {
  const url = onApi(engine, link);
  const page = await openLink(url);
  if (page.status !== 200) return { status: page.status, html: page.html };
  return pressButton(url, page, action, fields);
}

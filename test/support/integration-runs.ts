import assert from 'node:assert/strict';
import type { Engine } from './engine';
import type { FakeServices } from './fake-services';
import { type Cfg, l, n } from './graphs';

/** Every integration's base URL, pointed at the fake services (Reddit's token endpoint has its own). */
export function fakeBases(fake: FakeServices): Record<string, string> {
  return {
    GITHUB_API_BASE: fake.base('github'),
    SLACK_API_BASE: fake.base('slack'),
    FIRECRAWL_API_BASE: fake.base('firecrawl'),
    EXA_API_BASE: fake.base('exa'),
    JINA_API_BASE: fake.base('jina'),
    GOOGLE_SHEETS_API_BASE: fake.base('google-sheets'),
    YOUTUBE_API_BASE: fake.base('youtube'),
    REDDIT_API_BASE: fake.base('reddit'),
    REDDIT_AUTH_BASE: fake.base('reddit-auth'),
    RESEND_API_BASE: fake.base('resend'),
    SENDGRID_API_BASE: fake.base('sendgrid'),
  };
}

/** One credential per integration, as a user sets them in env management. */
export const CREDENTIALS: Record<string, string> = {
  GITHUB_ACCESS_TOKEN: 'ghp_test_token_0001',
  SLACK_BOT_TOKEN: 'xoxb-test-bot',
  SLACK_USER_TOKEN: 'xoxp-test-user',
  FIRECRAWL_API_KEY: 'fc-test-key',
  EXA_API_KEY: 'exa-test-key',
  JINA_API_KEY: 'jina-test-key',
  GOOGLE_ACCESS_TOKEN: 'ya29.test-token',
  REDDIT_CLIENT_ID: 'reddit-client',
  REDDIT_CLIENT_SECRET: 'reddit-secret',
  REDDIT_USER_AGENT: 'spur-tests/1.0',
  REDDIT_USERNAME: 'spur_bot',
  REDDIT_PASSWORD: 'hunter2',
  RESEND_API_KEY: 're_test_key',
  SENDGRID_API_KEY: 'SG.test-key',
};

/** Base URL settings before the rest, as a user enters them: a key is used only with the base it was entered under. */
export function basesFirst(settings: Record<string, string>): Array<[string, string]> {
  const isBase = (name: string) => /(_API_BASE|_AUTH_BASE|_BASE_URL|_ENDPOINT)$/.test(name);
  return Object.entries(settings).sort(([a], [b]) => Number(isBase(b)) - Number(isBase(a)));
}

export async function setEnv(engine: Engine, settings: Record<string, string>): Promise<void> {
  for (const [name, value] of basesFirst(settings)) {
    const res = await engine.http.post('/env-mgmt/', { name, value });
    assert.equal(res.status, 200, `${name}: ${JSON.stringify(res.body)}`);
  }
}

export async function unsetEnv(engine: Engine, name: string): Promise<void> {
  const res = await engine.http.delete(`/env-mgmt/${name}`);
  assert.ok([200, 404].includes(res.status), `${name}: ${JSON.stringify(res.body)}`);
}

export interface NodeRun {
  status: string;
  output: any;
  task: { status: string; error?: string | null; outputs?: unknown };
  message: string | null;
}

/** `in` (InputNode, fields x and y) → `node` of `type`: a blocking run, its record and the node's task. */
export async function runNode(
  engine: Engine,
  type: string,
  config: Cfg,
  inputs: Record<string, unknown> = { x: 'hello' },
): Promise<NodeRun> {
  const definition = {
    nodes: [
      n('in', 'InputNode', { output_schema: Object.fromEntries(Object.keys(inputs).map((k) => [k, 'string'])) }),
      n('node', type, config),
    ],
    links: [l('in', 'node')],
  };
  const wf = (await engine.http.post('/wf/', { name: `${type}-${Math.random()}`, definition })).body;
  assert.ok(wf.id, JSON.stringify(wf));
  const res = await engine.http.post(`/wf/${wf.id}/run/`, { initial_inputs: { in: inputs } });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  const [record] = (await engine.http.get(`/wf/${wf.id}/runs/`)).body;
  const task = record.tasks.find((t: { node_id: string }) => t.node_id === 'node');
  return { status: record.status, output: res.body.node, task, message: record.message ?? null };
}

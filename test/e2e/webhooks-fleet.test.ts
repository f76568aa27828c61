import assert from 'node:assert/strict';
import { hashApiKey } from '../../src/http/api-keys';
import { type ApiProcess, startApiProcess } from '../support/api-process';
import { type Engine, startEngine } from '../support/engine';
import { l, n } from '../support/graphs';
import { client } from '../support/http';
import { rawClient, type RawClient, type RawReply } from '../support/raw-http';

const KEY = 'spur_webhook-fleet-key-0123456789';

const echo = {
  nodes: [
    n('in', 'InputNode', { output_schema: { title: 'string' } }),
    n('out', 'OutputNode', { output_map: { title: 'in.title' } }),
  ],
  links: [l('in', 'out')],
};

/**
 * Two api processes on one database, as a fleet behind a load balancer runs: what a trigger
 * promises (its rate, a rotated URL's death) holds across them, not per process.
 */
describe('e2e: webhook triggers across two api processes', function () {
  this.timeout(120_000);
  let engine: Engine;
  let second: ApiProcess;
  let api: ReturnType<typeof client>;
  let hooksA: RawClient;
  let hooksB: RawClient;

  before(async () => {
    engine = await startEngine({ SPUR_API_KEY_HASHES: hashApiKey(KEY) });
    // The second api alone (src/processes/api.ts); the first one's hosted worker runs what either starts.
    second = await startApiProcess(engine.api.env);
    api = client(engine.api.baseUrl, { authorization: `Bearer ${KEY}` });
    hooksA = rawClient(new URL(engine.api.baseUrl).origin);
    hooksB = rawClient(new URL(second.baseUrl).origin);
  });
  after(async () => {
    hooksA?.close();
    hooksB?.close();
    await second?.process.stop();
    await engine?.close();
  });

  const hook = (via: RawClient, url: string, title: string): Promise<RawReply> =>
    via.request({
      method: 'POST',
      path: url,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ title }),
    });

  async function newTrigger(spec: Record<string, unknown> = {}) {
    const wf = await api.post('/wf/', { name: `fleet-${Date.now()}-${Math.random()}`, definition: echo });
    assert.equal(wf.status, 200, wf.text);
    const trigger = await api.post(`/wf/${wf.body.id}/triggers/`, { name: 'fleet', ...spec });
    assert.equal(trigger.status, 200, trigger.text);
    return { workflowId: wf.body.id as string, id: trigger.body.id as string, url: trigger.body.url as string };
  }

  async function runCount(workflowId: string): Promise<number> {
    const res = await api.get(`/wf/${workflowId}/runs/?page_size=100`);
    assert.equal(res.status, 200, res.text);
    return (res.body as unknown[]).length;
  }

  it('lets no more than the rate through per window across both processes', async () => {
    // One delivery per 1000 s window: a burst of a few seconds touches one window (two, rarely).
    const windowMs = 1_000_000;
    const trigger = await newTrigger({ rate_per_second: 0.001 });
    const sent = Date.now();
    const replies = await Promise.all(
      Array.from({ length: 20 }, (_, i) => hook(i % 2 === 0 ? hooksA : hooksB, trigger.url, `burst ${i}`)),
    );
    const windows = Math.floor(Date.now() / windowMs) - Math.floor(sent / windowMs) + 1;
    const taken = replies.filter((r) => r.status === 202);
    const refused = replies.filter((r) => r.status === 429);
    assert.equal(taken.length + refused.length, 20, replies.map((r) => r.status).join(','));
    assert.ok(taken.length >= 1 && taken.length <= windows, `${taken.length} taken across ${windows} window(s)`);
    // Each process refused some: both count against the one limit.
    for (const [name, half] of [
      ['first', replies.filter((_, i) => i % 2 === 0)],
      ['second', replies.filter((_, i) => i % 2 === 1)],
    ] as const)
      assert.ok(
        half.some((r) => r.status === 429),
        `the ${name} api refused none: ${half.map((r) => r.status)}`,
      );
    assert.equal(await runCount(trigger.workflowId), taken.length, 'a run for each delivery taken, none for the rest');
  });

  it('answers a rotated URL 404 on every process at once, the new one on either', async () => {
    const trigger = await newTrigger();
    // Both processes have served the old URL: neither may still know it after the rotation.
    assert.equal((await hook(hooksA, trigger.url, 'a before')).status, 202);
    assert.equal((await hook(hooksB, trigger.url, 'b before')).status, 202);
    const rotated = await api.post(`/triggers/${trigger.id}/rotate/`);
    assert.equal(rotated.status, 200, rotated.text);
    for (const [name, via] of [
      ['first', hooksA],
      ['second', hooksB],
    ] as const) {
      const old = await hook(via, trigger.url, `${name} after`);
      assert.equal(old.status, 404, `the ${name} api took the rotated URL: ${old.body.toString()}`);
    }
    const fresh = await hook(hooksB, rotated.body.url as string, 'new url');
    assert.equal(fresh.status, 202, fresh.body.toString());
    assert.equal(await runCount(trigger.workflowId), 3, 'two runs before the rotation, one by the new URL');
  });
});

// The Temporal Web UI shows who started a run: the `SpurStartedBy` search attribute (a user's
// username, `key:<tag>` for a configured key, the trigger for a webhook's or a schedule's run), so
// `SpurStartedBy = "<username>"` lists exactly that user's runs: docs/runs.md.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { runWorkflowId } from '../../src/contracts/workflow-names';
import { hashApiKey } from '../../src/http/api-keys';
import { type Engine, isFinal, startEngine, waitForRun } from '../support/engine';
import { input, l, n } from '../support/graphs';
import { client } from '../support/http';
import { eventually } from '../support/python-runs';

const ADMIN_KEY = 'spur_started-by-admin-key-0123456789';
const echo = {
  nodes: [input(), n('out', 'OutputNode', { output_map: { x: 'in.x' } })],
  links: [l('in', 'out')],
};

type Http = ReturnType<typeof client>;

describe('e2e: SpurStartedBy names who started each run', function () {
  this.timeout(180_000);
  let engine: Engine;
  let admin: Http;
  before(async () => {
    engine = await startEngine({ SPUR_API_KEY_HASHES: hashApiKey(ADMIN_KEY), SPUR_LOG_LEVEL: 'error' });
    admin = client(engine.api.baseUrl, { authorization: `Bearer ${ADMIN_KEY}` });
  });
  after(async () => engine?.close());

  async function userWithKey(username: string, role: string): Promise<Http> {
    const user = await admin.post('/access/users/', { username, role });
    assert.equal(user.status, 201, user.text);
    const key = await admin.post('/access/keys/', { name: 'runs', user_id: user.body.id });
    assert.equal(key.status, 201, key.text);
    return client(engine.api.baseUrl, { authorization: `Bearer ${key.body.key}` });
  }

  async function startRun(http: Http, workflowId: string, x: string): Promise<string> {
    const res = await http.post(`/wf/${workflowId}/start_run/`, { initial_inputs: { in: { x } } });
    assert.equal(res.status, 200, res.text);
    assert.equal((await waitForRun(admin, res.body.id, isFinal)).status, 'COMPLETED');
    return res.body.id as string;
  }

  /** The run ids of this engine's runs that Temporal lists for `query` (other suites share the server). */
  async function listed(query: string): Promise<string[]> {
    const prefix = engine.api.config.temporal.workflowIdPrefix;
    const ids: string[] = [];
    for await (const execution of engine.api.temporal.workflow.list({ query }))
      if (execution.workflowId.startsWith(`${prefix}run-`)) ids.push(execution.workflowId);
    return ids.sort();
  }

  it('lists exactly each starter\'s runs by `SpurStartedBy = "<who>"`: two users, a configured key, a webhook and a schedule', async () => {
    const ada = await userWithKey('ada', 'operator');
    const bo = await userWithKey('bo.b@ops', 'builder');
    const wf = (await admin.post('/wf/', { name: 'started by', definition: echo })).body.id as string;
    const adas = [await startRun(ada, wf, 'a1'), await startRun(ada, wf, 'a2')];
    const bos = [await startRun(bo, wf, 'b1')];
    const keys = [await startRun(admin, wf, 'k1')];

    const trigger = (await admin.post(`/wf/${wf}/triggers/`, { name: 'hook' })).body as { id: string; url: string };
    const origin = new URL(engine.api.baseUrl).origin;
    const delivered = await fetch(`${origin}${trigger.url}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ x: 'w' }),
    });
    assert.equal(delivered.status, 202, await delivered.text());
    const runs = (await admin.get(`/wf/${wf}/runs/?page_size=100`)).body as any[];
    const hooks = runs.filter((r) => r.trigger?.id === trigger.id).map((r) => r.id as string);
    assert.equal(hooks.length, 1);

    const sc = await admin.post(`/wf/${wf}/schedules/`, { interval_seconds: 3600, initial_inputs: { in: { x: 's' } } });
    assert.equal(sc.status, 200, sc.text);
    const fired = await admin.post(`/schedules/${sc.body.id}/trigger/`, {});
    assert.equal(fired.status, 200, fired.text);
    const scheduled = [fired.body.id as string];
    await admin.delete(`/schedules/${sc.body.id}/`);

    const tag = createHash('sha256').update(ADMIN_KEY).digest('hex').slice(0, 12);
    const expected: [string, string[]][] = [
      ['ada', adas],
      ['bo.b@ops', bos],
      [`key:${tag}`, keys],
      [`webhook:${trigger.id}`, hooks],
      [`schedule:${sc.body.id}`, scheduled],
    ];
    const prefix = engine.api.config.temporal.workflowIdPrefix;
    for (const [who, runIds] of expected) {
      const want = runIds.map((id) => runWorkflowId(id, prefix)).sort();
      // Temporal's visibility store is updated shortly after a start.
      await eventually(`the runs of ${who}`, async () => {
        const got = await listed(`SpurStartedBy = "${who}"`);
        return JSON.stringify(got) === JSON.stringify(want) ? got : undefined;
      });
    }
    // Every run names its starter: none is listed without one.
    const all = [...adas, ...bos, ...keys, ...hooks, ...scheduled].map((id) => runWorkflowId(id, prefix)).sort();
    assert.deepEqual(await listed('SpurStartedBy IS NOT NULL'), all);
  });
});

import assert from 'node:assert/strict';
import { type Engine, closeReconcilingEngine, startEngine, waitForRun } from '../support/engine';
import { input, l, n } from '../support/graphs';
import { keyedRunLeftUnstarted } from '../support/half-started-runs';

const echo = { nodes: [input(), n('out', 'OutputNode', { output_map: { x: 'in.x' } })], links: [l('in', 'out')] };

describe('e2e: the reconciler and keyed runs whose api died mid-request', function () {
  this.timeout(180_000);
  let engine: Engine;

  before(async () => {
    engine = await startEngine({ SPUR_RECONCILE_EVERY_SECONDS: '2', SPUR_RECONCILE_GRACE_SECONDS: '3' });
  });
  after(() => closeReconcilingEngine(engine));

  const workflow = async (name: string) =>
    (await engine.http.post('/wf/', { name, definition: echo })).body.id as string;
  const runsOf = async (wf: string) =>
    ((await engine.http.get(`/wf/${wf}/runs/?page_size=100`)).body as Array<{ id: string }>).map((r) => r.id);

  it('starts a run whose key was claimed for it (the api died before starting it)', async () => {
    const wf = await workflow('claimed, not started');
    const runId = await keyedRunLeftUnstarted(engine, wf, 'claimed-key', { in: { x: 'late' } }, true);
    const done = await waitForRun(
      engine.http,
      runId,
      (r) => ['COMPLETED', 'FAILED', 'CANCELED'].includes(r.status),
      90_000,
    );
    assert.equal(done.status, 'COMPLETED', (done as { message?: string }).message);
  });

  it('removes, unstarted, a run whose key was never claimed for it; a retry with the key gets its own run', async () => {
    const wf = await workflow('recorded, not claimed');
    const orphan = await keyedRunLeftUnstarted(engine, wf, 'unclaimed-key', { in: { x: 'a' } }, false);
    assert.equal((await engine.http.get(`/run/${orphan}/`)).status, 200);
    const deadline = Date.now() + 90_000;
    while ((await engine.http.get(`/run/${orphan}/`)).status !== 404) {
      assert.ok(Date.now() < deadline, `run ${orphan} is still there`);
      await new Promise((r) => setTimeout(r, 250));
    }
    const retry = await engine.http.request(
      'POST',
      `/wf/${wf}/start_run/`,
      { initial_inputs: { in: { x: 'a' } } },
      { 'Idempotency-Key': 'unclaimed-key' },
    );
    assert.equal(retry.status, 200, JSON.stringify(retry.body));
    assert.equal(retry.headers.get('idempotent-replayed'), null);
    assert.equal((await waitForRun(engine.http, retry.body.id)).status, 'COMPLETED');
    assert.deepEqual(await runsOf(wf), [retry.body.id]);
  });
});

import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Engine, startEngine, waitForRun } from '../support/engine';
import { input, l, n } from '../support/graphs';

/** Where Spur says it is reached from outside (callback URLs are built on it, never on a request). */
const PUBLIC_URL = 'https://spur.example.test';

/**
 * An outside system that takes a job with a callback URL and calls it back when the job is done:
 * 3 s later, and then once more (a retry a careless sender makes). Spur's public origin reaches
 * the api here as a reverse proxy in front of it would.
 */
async function startJobService(apiBase: string) {
  const jobs: string[] = [];
  const callbacks: { status: number; body: unknown }[] = [];
  const callBack = async (url: string, body: unknown) => {
    assert.ok(url.startsWith(`${PUBLIC_URL}/api/`), url);
    const res = await fetch(`${apiBase}${url.slice(`${PUBLIC_URL}/api`.length)}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    callbacks.push({ status: res.status, body: await res.json().catch(() => null) });
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const { callback } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { callback: string };
      jobs.push(callback);
      res.writeHead(202, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ job: jobs.length }));
      setTimeout(() => {
        void callBack(callback, { paid: true, job: jobs.length })
          .then(() => callBack(callback, { paid: false }))
          .catch((err: unknown) => callbacks.push({ status: 0, body: String(err) }));
      }, 3000);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    jobs,
    callbacks,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

describe('e2e: a callback URL handed to an outside system by an HTTPRequestNode', function () {
  this.timeout(120_000);
  let engine: Engine;
  let service: Awaited<ReturnType<typeof startJobService>>;
  before(async () => {
    engine = await startEngine({ SPUR_PUBLIC_URL: PUBLIC_URL });
    service = await startJobService(engine.api.baseUrl);
  });
  after(async () => {
    await service?.close();
    await engine?.close();
  });

  it('the system calls back 3 s later: the run completes with its body; its second call is 410', async () => {
    const definition = {
      nodes: [
        input(),
        n('submit', 'HTTPRequestNode', {
          method: 'POST',
          url: `${service.url}/jobs`,
          body: '{"callback": {{ callback_url("paid") | tojson }}}',
        }),
        n('paid', 'WaitForCallbackNode', { timeout_seconds: 60 }),
        n('out', 'OutputNode', { output_map: { receipt: 'paid.job' } }),
      ],
      links: [l('in', 'submit'), l('submit', 'paid'), l('paid', 'out')],
    };
    const wf = await engine.http.post('/wf/', { name: 'pay and wait', definition });
    assert.equal(wf.status, 200, wf.text);
    const started = await engine.http.post(`/wf/${wf.body.id}/start_run/`, { initial_inputs: { in: { x: 'go' } } });
    assert.equal(started.status, 200, started.text);
    const run = await waitForRun(engine.http, started.body.id, undefined, 90_000);
    assert.equal(run.status, 'COMPLETED', JSON.stringify(run.tasks));
    const task = run.tasks.find((t: { node_id: string }) => t.node_id === 'paid');
    assert.deepEqual(task.outputs, { paid: true, job: 1 });
    assert.equal(service.jobs.length, 1);
    assert.match(service.jobs[0] as string, /^https:\/\/spur\.example\.test\/api\/callbacks\/\S+$/);

    for (const until = Date.now() + 30_000; service.callbacks.length < 2 && Date.now() < until;)
      await new Promise((r) => setTimeout(r, 200));
    assert.deepEqual(
      service.callbacks.map((c) => c.status),
      [200, 410],
      JSON.stringify(service.callbacks),
    );
    const after = await engine.http.get(`/run/${started.body.id}/`);
    assert.deepEqual(after.body.tasks.find((t: { node_id: string }) => t.node_id === 'paid').outputs, {
      paid: true,
      job: 1,
    });
  });
});

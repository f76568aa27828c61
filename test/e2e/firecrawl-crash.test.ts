import assert from 'node:assert/strict';
import { type SplitEngine, startSplitEngine, waitForRun } from '../support/engine';
import { type FakeServices, startFakeServices } from '../support/fake-services';
import { l, n } from '../support/graphs';
import { setEnv } from '../support/integration-runs';
import { startWorker } from '../support/worker';

async function until(what: string, predicate: () => boolean, timeoutMs = 90_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('e2e: a Firecrawl crawl survives kill -9 of its worker', function () {
  this.timeout(240_000);
  let engine: SplitEngine;
  let fake: FakeServices;
  before(async () => {
    engine = await startSplitEngine();
    fake = await startFakeServices();
    await setEnv(engine, { FIRECRAWL_API_BASE: fake.base('firecrawl'), FIRECRAWL_API_KEY: 'fc-crash-key' });
  });
  after(async () => {
    await engine?.close();
    await fake?.close();
  });

  it('the retried activity resumes polling the crawl it started: one POST /v1/crawl, and the run completes', async () => {
    fake.state.crawlCompleteAfterPolls = Infinity;
    const definition = {
      nodes: [
        n('in', 'InputNode', { output_schema: { url: 'string' } }),
        n('crawl', 'FirecrawlCrawlNode', { url_template: '{{in.url}}', heartbeat_timeout_seconds: 2 }),
      ],
      links: [l('in', 'crawl')],
    };
    const wf = (await engine.http.post('/wf/', { name: 'crawl crash', definition })).body;
    const started = await engine.http.post(`/wf/${wf.id}/start_run/`, {
      initial_inputs: { in: { url: 'https://example.org' } },
    });
    assert.equal(started.status, 200, JSON.stringify(started.body));
    const polls = () => fake.to('firecrawl', 'GET', /^\/v1\/crawl\/crawl-1$/).length;
    // Three polls span more than the heartbeat throttle (0.8 × 2 s): the crawl id has reached the server.
    await until('the crawl to be polled three times', () => polls() >= 3);

    engine.worker.process.kill('SIGKILL');
    await engine.worker.process.exited;
    const pollsAtKill = polls();
    engine.worker = await startWorker(engine.api.env);
    await until('the new worker to poll the same crawl', () => polls() > pollsAtKill);
    fake.state.crawlCompleteAfterPolls = 0;

    const run = await waitForRun(engine.http, started.body.id, undefined, 120_000);
    assert.equal(run.status, 'COMPLETED', JSON.stringify(run));
    assert.equal(fake.to('firecrawl', 'POST', /^\/v1\/crawl$/).length, 1, 'no second crawl was started');
    assert.equal(fake.state.crawls.size, 1);
    const record = (await engine.http.get(`/run/${started.body.id}/`)).body;
    const task = record.tasks.find((t: { node_id: string }) => t.node_id === 'crawl');
    assert.equal(task.status, 'COMPLETED');
    assert.deepEqual(
      JSON.parse(task.outputs.crawl_result).map((p: { markdown: string }) => p.markdown),
      ['# Page 1', '# Page 2'],
    );
  });
});

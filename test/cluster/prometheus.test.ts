// The cluster's Prometheus (scripts/lib/cluster/prometheus.ts) scrapes every api and worker: the runs
// a client starts through the load balancer, whichever api took each, are counted there.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type Cluster, type SpurProcess, startCluster } from '../../scripts/lib/cluster/cluster';
import { until } from '../support/exec-log';
import { l, n } from '../support/graphs';
import { client } from '../support/http';
import { stack } from '../support/stack';

/** Runs the test starts: half blocking (`/run/`), half `/start_run/`. */
const RUNS = 12;

const echo = {
  nodes: [
    n('in', 'InputNode', { output_schema: { x: 'string' } }),
    n('out', 'OutputNode', { output_map: { y: 'in.x' } }),
  ],
  links: [l('in', 'out')],
};

interface Sample {
  metric: Record<string, string>;
  value: [number, string];
}

describe('cluster: Prometheus scrapes every api and worker', function () {
  this.timeout(600_000);
  let cluster: Cluster;
  const clusterDir = mkdtempSync(path.join(os.tmpdir(), 'spur-cluster-prom-'));

  before(async () => {
    cluster = await startCluster({
      // Not under the harness's own folder (0700): PostgreSQL runs as its own user and must enter it.
      dir: clusterDir,
      workflowBundle: stack.workflowBundle,
      workers: 1,
      logToFiles: true,
      scrapeIntervalSeconds: 1,
    });
  });
  after(async () => {
    await cluster?.stop();
    if (this.tests.every((t) => t.state === 'passed')) rmSync(clusterDir, { recursive: true, force: true });
    else console.error(`cluster logs kept in ${clusterDir}`);
  });

  /** An instant query of Prometheus's HTTP API. */
  async function query(promql: string): Promise<Sample[]> {
    const res = await fetch(`${cluster.prometheus.url}/api/v1/query?query=${encodeURIComponent(promql)}`);
    const body = (await res.json()) as { status: string; data: { result: Sample[] } };
    assert.equal(body.status, 'success', JSON.stringify(body));
    return body.data.result;
  }

  it(`counts the ${RUNS} runs a client started through the load balancer`, async () => {
    const http = client(cluster.apiUrl, { authorization: `Bearer ${cluster.apiKey}` });
    const wf = await http.post('/wf/', { name: 'counted', definition: echo });
    assert.equal(wf.status, 200, wf.text);
    const answers = await Promise.all(
      Array.from({ length: RUNS }, (_, i) =>
        http.post(`/wf/${wf.body.id}/${i % 2 === 0 ? 'run' : 'start_run'}/`, {
          initial_inputs: { in: { x: `x${i}` } },
        }),
      ),
    );
    for (const res of answers) assert.equal(res.status, 200, res.text);

    // Every process of the cluster is a target, and up.
    const processes = [...cluster.apis, ...cluster.workers].map((p) => p.name).sort();
    let up: string[] = [];
    await until('every api and worker scraped', async () => {
      up = (await query('up == 1')).map((s) => s.metric.process ?? '').sort();
      return up.join() === processes.join();
    }).catch((err: Error) => assert.fail(`${err.message}: up ${up.join()} of ${processes.join()}`));

    // The runs, as the apis that took them counted them, once a scrape after the last has landed.
    let counted = -1;
    await until(`Prometheus to count ${RUNS} runs`, async () => {
      counted = Number((await query('sum(spur_runs_started_total)'))[0]?.value[1] ?? 0);
      return counted === RUNS;
    }).catch((err: Error) => assert.fail(`${err.message}: it counts ${counted}`));
  });

  it('scrapes a replacement worker, and no longer the one it replaced, while runs keep completing', async () => {
    const http = client(cluster.apiUrl, { authorization: `Bearer ${cluster.apiKey}` });
    const wf = await http.post('/wf/', { name: 'across a restart', definition: echo });
    assert.equal(wf.status, 200, wf.text);
    const old = cluster.workers[0] as SpurProcess;
    const replacement = await cluster.startWorker();
    cluster.workers.push(replacement);
    const processes = async (healthy: boolean) =>
      (await query('up')).filter((s) => !healthy || s.value[1] === '1').map((s) => s.metric.process ?? '');
    let up: string[] = [];
    // Scraped means serving its metrics: started, so SIGTERM is the drain's signal.
    await until('the replacement scraped beside the worker it replaces', async () => {
      up = await processes(true);
      return up.includes(old.name) && up.includes(replacement.name);
    }).catch((err: Error) => assert.fail(`${err.message}: up ${up.join()}`));

    // Like `docker stop`: the signal goes to the process itself.
    process.kill(old.handle.pid, 'SIGTERM');
    const answers = Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        http.post(`/wf/${wf.body.id}/run/`, { initial_inputs: { in: { x: `r${i}` } } }),
      ),
    );
    assert.equal(await old.handle.exited, 0, 'the old worker drained and exited cleanly');
    for (const [i, res] of (await answers).entries()) assert.deepEqual(res.body.out, { y: `r${i}` }, res.text);
    await until('the old worker no longer a target', async () => {
      up = await processes(false);
      return !up.includes(old.name);
    }).catch((err: Error) => assert.fail(`${err.message}: targets ${up.join()}`));
  });
});

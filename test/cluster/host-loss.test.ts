// The production shape, losing hosts under load: two apis behind nginx, three workers, the Temporal
// server and FerretDB on PostgreSQL (scripts/lib/cluster). Processes stand in for hosts.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { type Cluster, startCluster } from '../../scripts/lib/cluster/cluster';
import { SpurWorkflowId } from '../../src/contracts/search-attributes';
import { WorkflowType } from '../../src/contracts/workflow-names';
import { until } from '../support/exec-log';
import { type FakeLlmServer, startFakeLlmServer } from '../support/fake-llm-server';
import { l, n } from '../support/graphs';
import { client, type Reply } from '../support/http';
import { nodeAttempts } from '../support/node-attempts';
import { stack } from '../support/stack';

const inputNode = n('in', 'InputNode', { output_schema: { x: 'string' } });
/** The fake provider answers after 1 s, echoing the prompt: an effect a receiver sees. */
const llmNode = n('llm', 'SingleLLMCallNode', {
  llm_info: { model: 'openai/gpt-4o', max_tokens: 50, temperature: 0 },
  user_message: 'say {{in.x}}',
  output_schema: { output: 'string' },
});

/** in(x) → llm → out: most of the 200 runs. */
const llmCall = {
  nodes: [inputNode, llmNode, n('out', 'OutputNode', { output_map: { y: 'llm.output' } })],
  links: [l('in', 'llm'), l('llm', 'out')],
};
const expectedY = (x: string) => `echo: say ${x}`;

/**
 * in(x) → llm → py (sandboxed, sleeping `seconds`) → out: the smoke run, and the slow runs whose
 * Python node is long enough to lose its worker while it surely still runs.
 */
const llmThenPython = (seconds: number) => ({
  nodes: [
    inputNode,
    llmNode,
    n('py', 'PythonFuncNode', {
      code: `import time\ntime.sleep(${seconds})\nreturn {"y": input_model.llm.output + "|py"}`,
      output_schema: { y: 'string' },
      timeout_seconds: 120,
    }),
    n('out', 'OutputNode', { output_map: { y: 'py.y' } }),
  ],
  links: [l('in', 'llm'), l('llm', 'py'), l('py', 'out')],
});
/** The slow runs' Python node: long enough that the one on the lost worker surely still runs. */
const SLOW_SECONDS = 25;
const expectedPythonY = (x: string) => `${expectedY(x)}|py`;

/** in(x) → gate (a human) → out(x). */
const gated = {
  nodes: [
    n('in', 'InputNode', { output_schema: { x: 'string' } }),
    n('gate', 'HumanInterventionNode'),
    n('out', 'OutputNode', { output_map: { x: 'gate.in.x' } }),
  ],
  links: [l('in', 'gate'), l('gate', 'out')],
};

const FINAL = ['COMPLETED', 'FAILED', 'CANCELED'];

describe('cluster: Temporal and FerretDB on PostgreSQL, two apis behind nginx, three workers', function () {
  this.timeout(900_000);
  let cluster: Cluster;
  const clusterDir = mkdtempSync(path.join(os.tmpdir(), 'spur-cluster-'));
  let fake: FakeLlmServer;
  let http: ReturnType<typeof client>;
  /** Every answer a client got that was not a 200: the test asserts each was a 503 with Retry-After. */
  const refusals: Array<{ what: string; status: number; retryAfter: string | null; body: string }> = [];

  before(async () => {
    fake = await startFakeLlmServer();
    fake.respondWith(() => ({ delayMs: 1000 }));
    cluster = await startCluster({
      // Not under the harness's own folder (0700): PostgreSQL runs as its own user and must enter it.
      dir: clusterDir,
      // What the harness built for every process the suite starts (its dist/ too).
      workflowBundle: stack.workflowBundle,
      logToFiles: true,
      // The fake provider is on loopback. The reconciler passes often and soon: a run recorded by a
      // request whose answer PostgreSQL's kill cut off (the client sent it again under its key, which
      // then named another run) is its to discard, within the test's time.
      env: {
        SPUR_OUTBOUND_ALLOW_PRIVATE: 'true',
        SPUR_RECONCILE_EVERY_SECONDS: '5',
        SPUR_RECONCILE_GRACE_SECONDS: '15',
      },
    });
    http = client(cluster.apiUrl, { authorization: `Bearer ${cluster.apiKey}` });
    for (const [name, value] of [
      ['OPENAI_API_BASE', `${fake.url}/v1`],
      ['OPENAI_API_KEY', 'sk-test'],
    ]) {
      const res = await http.post('/env-mgmt/', { name, value });
      assert.equal(res.status, 200, res.text);
    }
  });
  after(async () => {
    await cluster?.stop();
    await fake?.close();
    // Kept, with its logs, when a test failed.
    if (this.tests.every((t) => t.state === 'passed')) rmSync(clusterDir, { recursive: true, force: true });
    else console.error(`cluster logs kept in ${clusterDir}`);
  });

  /**
   * A client as the docs advise: a 503 is waited out (Retry-After) and the request sent again with
   * the same Idempotency-Key, so a retry gets the same run. Any other failure is the test's failure.
   * `accepted` names the other statuses the route documents as success for this request.
   */
  async function send(
    what: string,
    method: 'POST' | 'GET',
    route: string,
    body?: Record<string, unknown>,
    accepted: number[] = [],
  ): Promise<Reply<any>> {
    const key = randomUUID();
    for (let attempt = 0; attempt < 60; attempt++) {
      let res: Reply<any>;
      try {
        res = await http.request(method, route, body, method === 'POST' ? { 'Idempotency-Key': key } : {});
      } catch (err) {
        throw new Error(`${what}: the load balancer itself failed: ${String(err)}`);
      }
      if (res.status === 200 || accepted.includes(res.status)) return res;
      refusals.push({
        what,
        status: res.status,
        retryAfter: res.headers.get('retry-after'),
        body: res.text.slice(0, 300),
      });
      // Anything but a 200 or a 503 is a failure the client could not handle: fail here, saying what.
      if (res.status !== 503) throw new Error(`${what}: answered ${res.status}: ${res.text.slice(0, 300)}`);
      await new Promise((r) => setTimeout(r, Number(res.headers.get('retry-after') ?? 5) * 1000));
    }
    throw new Error(`${what}: still refused after 60 attempts`);
  }

  it('answers through the load balancer, and Temporal on PostgreSQL finds runs by their search attributes', async () => {
    const wf = (await send('create', 'POST', '/wf/', { name: 'smoke', definition: llmThenPython(1) })).body;
    const res = await send('blocking run', 'POST', `/wf/${wf.id}/run/`, { initial_inputs: { in: { x: 'smoke' } } });
    assert.equal(res.body.out.y, expectedPythonY('smoke'));
    const temporal = new Client({ connection: await Connection.connect({ address: cluster.temporal.address }) });
    try {
      const query = `WorkflowType = '${WorkflowType.spurRun}' AND ${SpurWorkflowId.name} = '${wf.id}'`;
      await until('the run listed by SpurWorkflowId on SQL visibility', async () => {
        let found = 0;
        for await (const _ of temporal.workflow.list({ query })) found++;
        return found === 1;
      });
    } finally {
      await temporal.connection.close();
    }
  });

  it('loses a worker, an api and PostgreSQL under 200 runs: every run ends right, clients see only successes or 503', async () => {
    const temporal = new Client({ connection: await Connection.connect({ address: cluster.temporal.address }) });
    after(() => temporal.connection.close());
    const work = (await send('create', 'POST', '/wf/', { name: 'work', definition: llmCall })).body;
    const slow = (await send('create', 'POST', '/wf/', { name: 'slow', definition: llmThenPython(SLOW_SECONDS) })).body;
    const gate = (await send('create', 'POST', '/wf/', { name: 'gate', definition: gated })).body;
    const csv = ['x', ...Array.from({ length: 20 }, (_, i) => `row${i}`)].join('\n');
    const fd = new FormData();
    fd.append('file', new Blob([csv], { type: 'text/csv' }), 'rows.csv');
    const ds = await http.post('/ds/?name=host-loss', fd);
    assert.equal(ds.status, 200, ds.text);

    // 120 non-blocking runs, 39 blocking ones, 20 paused ones and a batch of 20 rows: 200 runs.
    const nonBlocking = Array.from({ length: 120 }, (_, i) => (i < 5 ? `nb${i}-slow` : `nb${i}`));
    const blocking = Array.from({ length: 39 }, (_, i) => `b${i}`);
    const paused = Array.from({ length: 20 }, (_, i) => `p${i}`);
    const started = new Map<string, string>(); // x -> run id
    const startAll = Promise.all(
      nonBlocking.map(async (x) => {
        const wf = x.endsWith('-slow') ? slow : work;
        const res = await send(`start ${x}`, 'POST', `/wf/${wf.id}/start_run/`, { initial_inputs: { in: { x } } });
        started.set(x, res.body.id);
      }),
    );
    const pausedIds = await Promise.all(
      paused.map(
        async (x) =>
          (await send(`gate ${x}`, 'POST', `/wf/${gate.id}/start_run/`, { initial_inputs: { in: { x } } })).body
            .id as string,
      ),
    );
    const batch = (
      await send('batch', 'POST', `/wf/${work.id}/start_batch_run/`, { dataset_id: ds.body.id, mini_batch_size: 5 })
    ).body;
    await startAll;

    // Hosts go down while runs are in flight: a worker with nodes running, an api with blocking
    // requests open (started after the worker loss, so they are still waiting when the api dies).
    // The worker to lose is one running a slow run's Python node now, as Temporal sees it (its
    // identity names the pid). The five slow runs are looked at together, and a node counts only if
    // it started within the last 15 s: at least 10 s of its sleep are left when its worker dies,
    // however slowly a loaded machine answers the looks.
    let hit: { runId: string; node: string; pid: number } | undefined;
    const slowRuns = [...started].filter(([x]) => x.endsWith('-slow')).map(([, runId]) => runId);
    await until(
      'a slow node running on a worker',
      async () => {
        const looks = await Promise.all(
          slowRuns.map(async (runId) => ({
            runId,
            running: (await nodeAttempts(temporal, '', runId)).find(
              (a) =>
                a.node === 'py' && a.state === 'running' && a.workerPid && Date.now() - (a.startedAt ?? 0) < 15_000,
            ),
          })),
        );
        const found = looks.find((look) => look.running);
        if (found?.running)
          hit = { runId: found.runId, node: found.running.node, pid: found.running.workerPid as number };
        return hit !== undefined;
      },
      120_000,
    );
    const target = hit as { runId: string; node: string; pid: number };
    const lostWorker = cluster.workers.find((w) => w.handle.pid === target.pid);
    assert.ok(lostWorker, `the node's worker (pid ${target.pid}) is one of the cluster's`);
    lostWorker.handle.kill('SIGKILL');
    const blockingAnswers = Promise.all(
      blocking.map(async (x) => {
        const res = await send(`run ${x}`, 'POST', `/wf/${work.id}/run/`, { initial_inputs: { in: { x } } });
        return { x, res };
      }),
    );
    // Blocking requests are open (each waits a second for its LLM call at least) when an api is lost.
    await until(
      'blocking runs under way',
      async () => fake.requests.filter((r) => /say b\d/.test(JSON.stringify(r.body))).length >= 10,
    );
    const [lostApi] = cluster.apis;
    lostApi?.handle.kill('SIGKILL');
    await cluster.restartPostgres('SIGKILL');

    // People approve the paused runs (through whichever api is left).
    for (const runId of pausedIds) {
      await until(
        `run ${runId} paused`,
        async () => (await send('status', 'GET', `/run/${runId}/status/`)).body.status === 'PAUSED',
        300_000,
      );
      // 202: no worker applied the decision within the api's wait (PostgreSQL was just restarted);
      // it is recorded durably and applied later, which the run ending COMPLETED below proves.
      const approved = await send(
        `approve ${runId}`,
        'POST',
        `/wf/process_pause_action/${runId}/`,
        { action: 'APPROVE', user_id: 'ops', comments: '', inputs: {} },
        [202],
      );
      assert.equal(approved.body.id, runId, approved.text.slice(0, 300));
    }

    const answers = await blockingAnswers;
    for (const { x, res } of answers)
      assert.equal(res.body.out?.y, expectedY(x), `blocking run ${x}: ${res.text.slice(0, 300)}`);
    const all = [...started.entries(), ...pausedIds.map((id, i) => [`p${i}`, id] as const)];
    for (const [x, runId] of all) {
      await until(
        `run ${runId} (${x}) ended`,
        async () => FINAL.includes((await send('status', 'GET', `/run/${runId}/status/`)).body.status),
        300_000,
      );
      const run = (await send('run', 'GET', `/run/${runId}/`)).body;
      assert.equal(run.status, 'COMPLETED', `${x}: ${run.message}`);
      const expected = x.startsWith('p') ? x : x.endsWith('-slow') ? expectedPythonY(x) : expectedY(x);
      assert.equal(run.outputs.out.y ?? run.outputs.out.x, expected, x);
    }
    await until(
      'the batch ended',
      async () => FINAL.includes((await send('status', 'GET', `/run/${batch.id}/status/`)).body.status),
      300_000,
    );
    const lines = (
      await send(
        'output file',
        'GET',
        `/of/${(await send('batch', 'GET', `/run/${batch.id}/`)).body.output_file_id}/download/`,
      )
    ).text
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { out?: { y: string }; error?: string });
    assert.deepEqual(
      lines.map((line) => line.out?.y ?? line.error),
      Array.from({ length: 20 }, (_, i) => expectedY(`row${i}`)),
    );

    // Nothing stays open: what a cut-off request left recorded is discarded by the reconciler.
    const openRuns = async () => {
      const open: string[] = [];
      for (let page = 1; ; page++) {
        const runs = (await send('list', 'GET', `/run/?page=${page}&page_size=100&parent_only=false`)).body as Array<{
          id: string;
          status: string;
        }>;
        open.push(...runs.filter((r) => !FINAL.includes(r.status)).map((r) => `${r.id} ${r.status}`));
        if (runs.length < 100) break;
      }
      return open;
    };
    let open = await openRuns();
    await until('no run left open', async () => (open = await openRuns()).length === 0, 60_000).catch(() => undefined);
    assert.deepEqual(open, []);

    // Clients saw 200s, and 503s with Retry-After while a dependency or an api was down: nothing else.
    assert.deepEqual(
      refusals.filter((r) => r.status !== 503 || !r.retryAfter),
      [],
    );
    // Blocking requests open on the lost api (or refused while PostgreSQL was down) were refused, sent
    // again with their key, and answered with their outputs (checked above).
    assert.ok(
      refusals.some((r) => /^run b\d+$/.test(r.what)),
      `no blocking request was refused: ${JSON.stringify(refusals.slice(0, 5))}`,
    );

    // A node's call reached the provider again only when Temporal started it again (a lost worker,
    // an outage): never twice within one attempt, never from two workers at once.
    for (const [x, runId] of started) {
      const calls = fake.requests.filter((r) => JSON.stringify(r.body).includes(`say ${x}"`)).length;
      const attempts = (await nodeAttempts(temporal, '', runId)).filter((a) => a.node === 'llm');
      const attempted = attempts.reduce((sum, a) => sum + a.attempt, 0);
      assert.ok(calls >= 1 && calls <= attempted, `${x}: ${calls} provider calls for ${attempted} attempts`);
    }
    // The node that was running on the lost worker was started again, on another one, and its run completed.
    const again = (await nodeAttempts(temporal, '', target.runId)).filter((a) => a.node === target.node).at(-1);
    assert.ok(again && again.attempt > 1 && again.workerPid !== target.pid, JSON.stringify({ target, again }));
  });
});

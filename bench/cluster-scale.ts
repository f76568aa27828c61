// The production shape, measured (`npx tsx bench/cluster-scale.ts`; part of `npm run bench`).
// One run of this file measures, on the same machine and the same compiled code:
//   1. the dev stack (Temporal dev server and FerretDB on SQLite, one api, one worker): sequential
//      latency of A (5 pure nodes) and C (one LLM call, 1 s at the local fake provider), and the
//      throughput of each;
//   2. the cluster (`npm run cluster`'s shape: PostgreSQL, the Temporal server and FerretDB on it,
//      two apis behind nginx) with 1, 2 and 3 workers: the same sequential latencies with one
//      worker, then A's and C's throughput with each worker count.
// Every worker runs at most BENCH_SLOTS activities at once (SPUR_WORKER_MAX_ACTIVITIES): a worker
// stands for a host, and its slots for what one host can hold in flight. C waits on its provider,
// so its throughput is slots × workers / 1 s until the shared services run out of CPU; A waits on
// nothing (its nodes are local activities), so on a 2-core machine it cannot gain from workers.
// CPU per run of every component (from /proc) and PostgreSQL's commits per run are what the paper
// extrapolation in docs/performance.md starts from. Writes bench/results/cluster-latest.md.
//
// Knobs: BENCH_SEQ_RUNS (200 rounds of A; C every 10th), BENCH_LOAD_SECONDS (30 per throughput
// phase), BENCH_SLOTS (2), BENCH_C_CONCURRENCY (10), BENCH_A_CONCURRENCY (50).
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { buildDist } from '../scripts/build';
import { buildWorkflowBundle } from '../scripts/build-bundle';
import { type Cluster, startCluster } from '../scripts/lib/cluster/cluster';
import { POSTGRES_USER, postgresBin } from '../scripts/lib/cluster/postgres';
import { startFakeLlmServer } from '../test/support/fake-llm-server';
import { CORES, CpuSampler } from './lib/cpu';
import { type JsonClient, jsonClient } from './lib/http';
import { type LoadResult, type Target, engineStep, runConcurrent, runInterleaved } from './lib/load';
import { saveResults } from './lib/report';
import { SCENARIOS, type Scenario } from './lib/scenarios';
import { startStack } from './lib/stack';
import { round, summarize } from './lib/stats';
import { intEnv } from './lib/env';

const SETTINGS = {
  seqRuns: intEnv('BENCH_SEQ_RUNS', 200, 1),
  loadSeconds: intEnv('BENCH_LOAD_SECONDS', 30, 1),
  slots: intEnv('BENCH_SLOTS', 2, 1),
  cConcurrency: intEnv('BENCH_C_CONCURRENCY', 10, 1),
  aConcurrency: intEnv('BENCH_A_CONCURRENCY', 50, 1),
};
const LLM_DELAY_MS = 1000;
const TASK_QUEUE = 'spur-runs';

interface Row {
  stack: 'dev' | 'cluster';
  phase: string;
  workers: number;
  concurrency: number;
  result: LoadResult;
  /** CPU-ms per run by component, and the machine's busy share of all cores over the phase. */
  cpuMsPerRun: Record<string, number>;
  machinePercent: number;
  /** PostgreSQL transactions committed per run, by database (the cluster's phases only). */
  commitsPerRun?: Record<string, number>;
}

const rows: Row[] = [];

function addRow(
  stack: Row['stack'],
  phase: string,
  workers: number,
  concurrency: number,
  result: LoadResult,
  commits?: Record<string, number>,
): Row {
  const runs = result.latenciesMs.length;
  const cpuMsPerRun: Record<string, number> = {};
  for (const [name, seconds] of Object.entries(result.cpu)) {
    if (name === 'machine') continue;
    cpuMsPerRun[name] = round((seconds * 1000) / Math.max(1, runs), 1);
  }
  const machinePercent = round(((result.cpu.machine ?? 0) / Math.max(1e-9, result.wallSeconds) / CORES) * 100, 0);
  const commitsPerRun = commits
    ? Object.fromEntries(Object.entries(commits).map(([db, n]) => [db, round(n / Math.max(1, runs), 1)]))
    : undefined;
  const row = { stack, phase, workers, concurrency, result, cpuMsPerRun, machinePercent, commitsPerRun };
  rows.push(row);
  const s = summarize(result.latenciesMs);
  console.log(
    `${stack} ${phase} workers=${workers} c=${concurrency}: ${runs} runs, ${result.failures} failed, p50 ${round(s.p50, 1)} ms, ` +
      `${round(runs / result.wallSeconds, 1)} runs/s, machine ${machinePercent} %`,
  );
  if (result.failureSamples.length) console.log(`  failures: ${result.failureSamples.join(' | ')}`);
  return row;
}

/** The two workflows and the fake provider's address, through the api like any client. */
async function prepare(http: JsonClient, providerUrl: string): Promise<{ a: Target; c: Target }> {
  for (const [name, value] of [
    ['OPENAI_API_BASE', `${providerUrl}/v1`],
    ['OPENAI_API_KEY', 'sk-bench'],
  ]) {
    const res = await http.post('/env-mgmt/', { name, value });
    if (res.status !== 200) throw new Error(`env-mgmt ${name}: ${res.status} ${JSON.stringify(res.body)}`);
  }
  const create = async (scenario: Scenario): Promise<Target> => {
    const definition = { nodes: scenario.nodes, links: scenario.links };
    const res = await http.post('/wf/', { name: `cluster bench ${scenario.key}`, definition });
    if (res.status !== 200) throw new Error(`create ${scenario.key}: ${res.status} ${JSON.stringify(res.body)}`);
    return { scenario, workflowId: (res.body as { id: string }).id };
  };
  return { a: await create(SCENARIOS.pure), c: await create(SCENARIOS.llm) };
}

/** Sequential latency: A every round, C every 10th (it waits a second each time). */
async function sequential(stack: Row['stack'], http: JsonClient, targets: { a: Target; c: Target }, cpu: CpuSampler) {
  const steps = [engineStep('A', http, targets.a), { ...engineStep('C', http, targets.c), every: 10 }];
  // A few runs first: the first ones load code and open connections (PostgreSQL's backends are
  // processes forked per connection: the sampler lists them once the pools have opened them).
  await runInterleaved(steps, 10, 60, cpu);
  cpu.refresh();
  const { results } = await runInterleaved(steps, SETTINGS.seqRuns, 600, cpu);
  addRow(stack, 'A seq', 1, 1, results[0] as LoadResult);
  addRow(stack, 'C seq', 1, 1, results[1] as LoadResult);
}

/**
 * Transactions committed so far in each of the cluster's databases (Temporal's, its visibility's,
 * FerretDB's), from pg_stat_database. Backends publish their counts at most once a second: read
 * after a pause.
 */
async function commitsByDatabase(cluster: Cluster): Promise<Record<string, number>> {
  await new Promise((r) => setTimeout(r, 1500));
  return perDatabase(
    cluster,
    "SELECT datname, xact_commit FROM pg_stat_database WHERE datname NOT LIKE 'template%' AND datname <> 'postgres'",
  );
}

/** A two-column query (database name, number) over the cluster's PostgreSQL, as psql runs it. */
async function perDatabase(cluster: Cluster, sql: string): Promise<Record<string, number>> {
  const args = [
    '-h',
    '127.0.0.1',
    '-p',
    String(cluster.postgres.port),
    '-U',
    POSTGRES_USER,
    '-d',
    'postgres',
    '-At',
    '-F',
    '\t',
    '-c',
    sql,
  ];
  const out = await new Promise<string>((resolve, reject) =>
    execFile(postgresBin('psql'), args, (err, stdout) => (err ? reject(err) : resolve(stdout))),
  );
  return Object.fromEntries(
    out
      .trim()
      .split('\n')
      .map((line) => line.split('\t'))
      .map(([db, n]) => [db ?? '', Number(n)]),
  );
}

const minus = (after: Record<string, number>, before: Record<string, number>) =>
  Object.fromEntries(Object.entries(after).map(([db, n]) => [db, n - (before[db] ?? 0)]));

/**
 * Runs from `concurrency` clients for BENCH_LOAD_SECONDS, after 3 s of the same load unmeasured;
 * on the cluster, with PostgreSQL's transactions over the measured part.
 */
async function throughput(
  http: JsonClient,
  target: Target,
  concurrency: number,
  cpu: CpuSampler,
  cluster?: Cluster,
): Promise<{ result: LoadResult; commits?: Record<string, number> }> {
  await runConcurrent(http, target, 1_000_000, concurrency, 3);
  cpu.refresh();
  const before = cluster ? await commitsByDatabase(cluster) : undefined;
  const result = await runConcurrent(http, target, 1_000_000, concurrency, SETTINGS.loadSeconds, cpu);
  if (!cluster || !before) return { result };
  return { result, commits: minus(await commitsByDatabase(cluster), before) };
}

/** Until Temporal lists a poller of the activity task queue from this worker (its identity is pid@host). */
async function untilPolling(connection: Connection, pid: number): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const res = await connection.workflowService.describeTaskQueue({
      namespace: 'default',
      taskQueue: { name: TASK_QUEUE },
      taskQueueType: 2, // activity
    });
    if ((res.pollers ?? []).some((p) => p.identity?.startsWith(`${pid}@`))) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`worker ${pid} is not polling after 60 s`);
}

function clusterSampler(cluster: Cluster): CpuSampler {
  const groups: Record<string, number> = {
    temporal: cluster.temporal.handle.pid,
    postgres: cluster.postgres.handle.pid,
    ferretdb: cluster.ferret.handle.pid,
    nginx: cluster.loadBalancer.handle.pid,
  };
  for (const api of cluster.apis) groups[api.name] = api.handle.pid;
  for (const worker of cluster.workers) groups[worker.name] = worker.handle.pid;
  return new CpuSampler(groups);
}

async function main(): Promise<void> {
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'spur-bench-cluster-'));
  const fake = await startFakeLlmServer();
  fake.respondWith(() => ({ delayMs: LLM_DELAY_MS }));
  const workerEnv = { SPUR_WORKER_MAX_ACTIVITIES: String(SETTINGS.slots), SPUR_OUTBOUND_ALLOW_PRIVATE: 'true' };
  const notes: string[] = [];
  let cluster: Cluster | undefined;
  // Outside the 0700 temporary folder: PostgreSQL runs as its own user and must enter it.
  const clusterDir = path.join(os.tmpdir(), `spur-bench-cluster-pg-${process.pid}`);
  try {
    const built = Date.now();
    await buildDist();
    const bundle = await buildWorkflowBundle(path.join(tmp, 'workflow-bundle.js'));
    notes.push(`dist/ and the workflow bundle built in ${round((Date.now() - built) / 1000, 1)} s`);

    // 1. The dev stack.
    const dev = await startStack({ tmpDir: mkdirp(path.join(tmp, 'dev')), compiled: true, extraEnv: workerEnv });
    notes.push(`dev stack started in ${round(dev.startSeconds, 1)} s`);
    try {
      const http = jsonClient(dev.apiUrl, 256);
      const targets = await prepare(http, fake.url);
      const cpu = new CpuSampler(dev.groups);
      await sequential('dev', http, targets, cpu);
      for (const [phase, target, c] of [
        ['A load', targets.a, SETTINGS.aConcurrency],
        ['C load', targets.c, SETTINGS.cConcurrency],
      ] as const)
        addRow('dev', phase, 1, c, (await throughput(http, target, c, cpu)).result);
      http.close();
    } finally {
      await dev.stop();
    }

    // 2. The cluster, one worker first.
    const clusterStart = Date.now();
    cluster = await startCluster({
      dir: mkdirp(clusterDir),
      workflowBundle: bundle,
      workers: 0,
      logToFiles: true,
      env: { SPUR_OUTBOUND_ALLOW_PRIVATE: 'true' },
    });
    const connection = await Connection.connect({ address: cluster.temporal.address });
    const first = await cluster.startWorker(workerEnv);
    cluster.workers.push(first);
    await untilPolling(connection, first.handle.pid);
    notes.push(`cluster started in ${round((Date.now() - clusterStart) / 1000, 1)} s (one worker polling)`);
    const http = jsonClient(cluster.apiUrl, 256, { authorization: `Bearer ${cluster.apiKey}` });
    const targets = await prepare(http, fake.url);
    await sequential('cluster', http, targets, clusterSampler(cluster));
    for (let workers = 1; workers <= 3; workers++) {
      if (workers > 1) {
        const added = await cluster.startWorker(workerEnv);
        cluster.workers.push(added);
        await untilPolling(connection, added.handle.pid);
      }
      for (const [phase, target, c] of [
        ['A load', targets.a, SETTINGS.aConcurrency],
        ['C load', targets.c, SETTINGS.cConcurrency],
      ] as const) {
        const { result, commits } = await throughput(http, target, c, clusterSampler(cluster), cluster);
        addRow('cluster', phase, workers, c, result, commits);
      }
    }
    const connections = await perDatabase(
      cluster,
      'SELECT datname, count(*) FROM pg_stat_activity WHERE datname IS NOT NULL GROUP BY datname',
    );
    notes.push(`PostgreSQL connections open at the end, by database: ${JSON.stringify(connections)}`);
    http.close();
    await connection.close();
    notes.push(`requests re-sent after a stale keep-alive connection (not failures): ${http.staleRetries}`);
  } finally {
    await cluster?.stop();
    await fake.close();
    rmSync(tmp, { recursive: true, force: true });
    rmSync(clusterDir, { recursive: true, force: true });
  }
  saveResults('cluster-latest.md', report(notes));
}

/** Component columns: the dev stack's processes, and the cluster's grouped by role. */
function byRole(cpu: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [name, ms] of Object.entries(cpu)) {
    const role = name.replace(/-\d+$/, ''); // api-1, api-2 → api; worker-3 → worker
    out[role] = round((out[role] ?? 0) + ms, 1);
  }
  return out;
}

const ROLES = ['api', 'worker', 'temporal', 'postgres', 'ferretdb', 'nginx', 'bench'];

function report(notes: string[]): string[] {
  const head = `| stack | phase | workers | c | runs | fail | p50 ms | p95 ms | runs/s | ${ROLES.join(' | ')} | total | machine % | PG commits/run |`;
  const lines = [
    `# Cluster benchmark — ${new Date().toISOString()}`,
    '',
    `Machine: ${CORES} × ${os.cpus()[0]?.model ?? 'cpu'}, Node ${process.version}. Settings: \`${JSON.stringify(SETTINGS)}\`, provider delay ${LLM_DELAY_MS} ms.`,
    '',
    'A = 5 pure nodes (local activities); C = Input → one LLM call (local fake provider, 1 s) → Output.',
    'Blocking runs (`POST /api/wf/{id}/run/`), client-side latency. Component columns: CPU-ms per run',
    '(from /proc; `api` and `worker` summed over every process of that role). machine % = busy share of all cores.',
    'PG commits/run: transactions committed per run in each PostgreSQL database (pg_stat_database).',
    '',
    head,
    `| ${head
      .split('|')
      .slice(1, -1)
      .map((_, i) => (i < 2 ? '---' : '---:'))
      .join(' | ')} |`,
  ];
  for (const row of rows) {
    const s = summarize(row.result.latenciesMs);
    const roles = byRole(row.cpuMsPerRun);
    const total = round(
      Object.values(roles).reduce((a, b) => a + b, 0),
      1,
    );
    const runs = row.result.latenciesMs.length;
    lines.push(
      `| ${row.stack} | ${row.phase} | ${row.workers} | ${row.concurrency} | ${runs} | ${row.result.failures} | ${round(s.p50, 1)} | ${round(s.p95, 1)} | ${round(runs / row.result.wallSeconds, 1)} | ${ROLES.map((r) => roles[r] ?? '').join(' | ')} | ${total} | ${row.machinePercent} | ${commitsCell(row.commitsPerRun)} |`,
    );
  }
  lines.push('', ...derived().map((l) => `- ${l}`), ...notes.map((n) => `- ${n}`));
  return lines;
}

/** `temporal 12.3, temporal_visibility 2.1, ferretdb 8.0` (databases with any commits). */
function commitsCell(perRun: Record<string, number> | undefined): string {
  if (!perRun) return '';
  return Object.entries(perRun)
    .filter(([, n]) => n > 0)
    .map(([db, n]) => `${db} ${n}`)
    .join(', ');
}

function derived(): string[] {
  const find = (stack: Row['stack'], phase: string, workers = 1) =>
    rows.find((r) => r.stack === stack && r.phase === phase && r.workers === workers);
  const p50 = (r: Row | undefined) => (r ? summarize(r.result.latenciesMs).p50 : Number.NaN);
  const rate = (r: Row | undefined) => (r ? r.result.latenciesMs.length / r.result.wallSeconds : Number.NaN);
  const out: string[] = [];
  const [devA, clusterA, devC, clusterC] = [
    find('dev', 'A seq'),
    find('cluster', 'A seq'),
    find('dev', 'C seq'),
    find('cluster', 'C seq'),
  ];
  out.push(
    `topology latency cost, A p50: ${round(p50(clusterA), 1)} ms on the cluster vs ${round(p50(devA), 1)} ms on the dev stack (×${round(p50(clusterA) / p50(devA), 2)}, +${round(p50(clusterA) - p50(devA), 1)} ms)`,
  );
  out.push(
    `topology latency cost, C p50 above the provider's ${LLM_DELAY_MS} ms: ${round(p50(clusterC) - LLM_DELAY_MS, 1)} ms on the cluster vs ${round(p50(devC) - LLM_DELAY_MS, 1)} ms on the dev stack`,
  );
  for (const phase of ['A load', 'C load']) {
    const one = rate(find('cluster', phase, 1));
    const ratios = [2, 3].map((w) => `${w} workers ×${round(rate(find('cluster', phase, w)) / one, 2)}`).join(', ');
    out.push(`${phase} throughput against 1 worker: ${ratios}`);
  }
  out.push(
    `C's ceiling from slots alone: ${SETTINGS.slots} slots × workers / ${LLM_DELAY_MS / 1000} s = ${SETTINGS.slots}, ${2 * SETTINGS.slots}, ${3 * SETTINGS.slots} runs/s`,
  );
  return out;
}

function mkdirp(dir: string): string {
  mkdirSync(dir, { recursive: true });
  return dir;
}

void main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});

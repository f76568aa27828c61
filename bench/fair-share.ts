// Fair-share benchmark (workspaces): while workspace A runs a 2 000-row batch, how much slower are
// workspace B's blocking 5-node runs than when the workers are idle? Measured with Spur's share
// mechanism (SPUR_FAIR_SHARE: Temporal task-queue priority and fairness, src/contracts/work-share.ts)
// and without it, each on a fresh stack, for both ways a batch runs its rows: child mode (every row a
// workflow of its own on the task queue: rows under a provider limit, with a pause, or
// SPUR_BATCH_ROW_MODE=child) and inline mode (rows inside chunk activities).
// A's rows call a fake provider that answers in BENCH_FAIR_PROVIDER_MS (default 1000); A's batch runs
// BENCH_FAIR_MINI rows at once (default 200, above the worker's 100 activity slots). B's runs go one
// after another, BENCH_FAIR_SAMPLES of them idle, as many beside the batch (one a second from its first
// window of model calls on; only runs that ended while it still ran count) and as many after it. Beside each
// p50: how long B's runs took in Temporal, how much of it their tasks waited on the queue (the part a
// task-queue mechanism can act on), and how many of the 2 cores were busy.
// Usage: npx tsx bench/fair-share.ts (bench/results/fair-share-latest.md)
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { hashApiKey } from '../src/http/api-keys';
import { type FakeLlmServer, startFakeLlmServer } from '../test/support/fake-llm-server';
import { api, uploadDataset } from './lib/batch-client';
import { jsonClient, type JsonClient } from './lib/http';
import { queueWaitMs, withTemporalClient } from './lib/history';
import { CpuSampler, accumulate, type CpuSample } from './lib/cpu';
import { saveResults } from './lib/report';
import { startStack } from './lib/stack';
import { median, percentileOf } from './lib/stats';

const num = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const settings = {
  rows: num('BENCH_FAIR_ROWS', 2000),
  mini: num('BENCH_FAIR_MINI', 200),
  providerMs: num('BENCH_FAIR_PROVIDER_MS', 1000),
  samples: num('BENCH_FAIR_SAMPLES', 40),
};
/** The issue's bar: B's p50 beside the batch within this factor of its idle p50. */
const TARGET_RATIO = 2;

type Mode = 'child' | 'inline';
/**
 * The share mechanisms a line is measured with: `off`, bulk work taking slots whatever the load
 * (SPUR_BULK_TARGET_CPU=1) and no keys; `on`, Spur's defaults (bulk gives way past the CPU target);
 * `on+keys`, that and Temporal's priority and fairness keys (SPUR_FAIR_SHARE).
 */
/** BENCH_FAIR_TARGET_CPU: the `on` lines' SPUR_BULK_TARGET_CPU in place of Spur's default. */
const TARGET: Record<string, string> = process.env.BENCH_FAIR_TARGET_CPU
  ? { SPUR_BULK_TARGET_CPU: process.env.BENCH_FAIR_TARGET_CPU }
  : {};
const SHARES = {
  off: { SPUR_BULK_TARGET_CPU: '1', SPUR_FAIR_SHARE: 'false' },
  on: { ...TARGET },
  'on+keys': { ...TARGET, SPUR_FAIR_SHARE: 'true' },
} as const satisfies Record<string, Record<string, string>>;
type Share = keyof typeof SHARES;
type Variant = { mode: Mode; share: Share };
/** BENCH_FAIR_MODES: which batch modes to measure (default both); BENCH_FAIR_SHARES: which mechanisms (default off,on). */
const MODES = (process.env.BENCH_FAIR_MODES ?? 'child,inline').split(',') as Mode[];
const SHARE_NAMES = (process.env.BENCH_FAIR_SHARES ?? 'off,on').split(',') as Share[];
const VARIANTS: Variant[] = MODES.flatMap((mode) => SHARE_NAMES.map((share) => ({ mode, share })));

const p90 = (xs: readonly number[]) => percentileOf(xs, 90);

/** B's interactive workflow: an input and four nodes after it, each reading the one before. */
const FIVE_NODES = {
  nodes: [
    { id: 'in', title: 'in', node_type: 'InputNode', config: { output_schema: { x: 'string' } } },
    ...['a', 'b', 'c', 'out'].map((id) => ({
      id,
      title: id,
      node_type: 'OutputNode',
      config: { output_map: { x: id === 'a' ? 'in.x' : `${{ b: 'a', c: 'b', out: 'c' }[id]}.x` } },
    })),
  ],
  links: [
    { source_id: 'in', target_id: 'a' },
    { source_id: 'a', target_id: 'b' },
    { source_id: 'b', target_id: 'c' },
    { source_id: 'c', target_id: 'out' },
  ],
};

/** A's batch workflow: one model call per row. */
const ONE_CALL = {
  nodes: [
    { id: 'in', title: 'in', node_type: 'InputNode', config: { output_schema: { x: 'string', k: 'string' } } },
    {
      id: 'ask',
      title: 'ask',
      node_type: 'SingleLLMCallNode',
      config: { llm_info: { model: 'openai/gpt-4o-mini', max_tokens: 20 }, user_message: 'say {{in.x}}' },
    },
    { id: 'out', title: 'out', node_type: 'OutputNode', config: { output_map: { answer: 'ask.output' } } },
  ],
  links: [
    { source_id: 'in', target_id: 'ask' },
    { source_id: 'ask', target_id: 'out' },
  ],
};

async function must(reply: Promise<{ status: number; body: unknown }>, what: string, status = 200) {
  const res = await reply;
  if (res.status !== status) throw new Error(`${what}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as Record<string, unknown>;
}

/** Workspace B with a builder's key acting in it, made by the installation admin. */
async function teamB(admin: JsonClient): Promise<{ key: string; workspace: string }> {
  const ws = await must(admin.post('/access/workspaces/', { name: 'team B' }), 'workspace', 201);
  const user = await must(admin.post('/access/users/', { username: 'b-builder', role: null }), 'user', 201);
  const wsPath = `/access/workspaces/${ws.id as string}/members/${user.id as string}`;
  await must(admin.put(wsPath, { role: 'builder' }), 'member');
  const key = await must(admin.post('/access/keys/', { name: 'b', user_id: user.id, workspace_id: ws.id }), 'key', 201);
  return { key: key.key as string, workspace: ws.id as string };
}

/** B's runs started between `from` and `to`: each one's time from start to close, and its tasks' time on the queue. */
async function queueWaits(address: string, workspace: string, from: Date, to: Date) {
  return withTemporalClient(address, async (client) => {
    const total: number[] = [];
    const queued: number[] = [];
    const query = `SpurWorkspace = '${workspace}' AND StartTime >= '${from.toISOString()}' AND StartTime <= '${to.toISOString()}'`;
    for await (const wf of client.workflow.list({ query })) {
      if (!wf.closeTime) continue;
      total.push(wf.closeTime.getTime() - wf.startTime.getTime());
      const history = await client.workflow.getHandle(wf.workflowId, wf.runId).fetchHistory();
      queued.push(queueWaitMs(history.events ?? []));
    }
    return { total, queued };
  });
}

async function blockingRun(client: JsonClient, workflowId: string, i: number): Promise<number> {
  const t0 = performance.now();
  await must(client.post(`/wf/${workflowId}/run/`, { initial_inputs: { in: { x: `b${i}` } } }), 'B run');
  return performance.now() - t0;
}

interface Outcome {
  idle: number[];
  beside: number[];
  /** B's runs once the batch has ended (cancelled), on the database it left. */
  after: number[];
  /** Rows of A's batch done when B's last counted run ended, and the batch's status then. */
  batchDone: number;
  /** Of B's runs beside the batch: how long each took in Temporal, and how much of it its tasks waited on the queue. */
  waits: { total: number[]; queued: number[] };
  /** Cores each process kept busy while B ran beside the batch (`machine`: all of them). */
  busy: Record<string, number>;
  batchStatus: string;
}

async function measure(variant: Variant, fake: FakeLlmServer): Promise<Outcome> {
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'spur-bench-fair-'));
  const adminKey = `spur-bench-${randomBytes(12).toString('hex')}`;
  const stack = await startStack({
    tmpDir: tmp,
    temporalDynamicConfig: process.env.BENCH_FAIR_PARTITIONS
      ? {
          'matching.numTaskqueueReadPartitions': Number(process.env.BENCH_FAIR_PARTITIONS),
          'matching.numTaskqueueWritePartitions': Number(process.env.BENCH_FAIR_PARTITIONS),
        }
      : {},
    extraEnv: {
      SPUR_API_KEY_HASHES: hashApiKey(adminKey),
      SPUR_OUTBOUND_ALLOW_PRIVATE: 'true',
      ...SHARES[variant.share],
      SPUR_BATCH_ROW_MODE: variant.mode === 'child' ? 'child' : 'auto',
      ...(process.env.BENCH_FAIR_SLOTS ? { SPUR_WORKER_MAX_ACTIVITIES: process.env.BENCH_FAIR_SLOTS } : {}),
    },
  });
  const auth = { authorization: `Bearer ${adminKey}` };
  const admin = jsonClient(stack.apiUrl, 64, auth);
  try {
    for (const [name, value] of [
      ['OPENAI_API_BASE', `${fake.url}/v1`],
      ['OPENAI_API_KEY', 'sk-bench'],
    ])
      await must(admin.post('/env-mgmt/', { name, value }), `env ${name}`);
    const team = await teamB(admin);
    const b = jsonClient(stack.apiUrl, 8, { authorization: `Bearer ${team.key}` });
    const bWorkflow = (await must(b.post('/wf/', { name: 'B interactive', definition: FIVE_NODES }), 'B wf'))
      .id as string;
    const aWorkflow = (await must(admin.post('/wf/', { name: 'A batch', definition: ONE_CALL }), 'A wf')).id as string;
    const dataset = await uploadDataset(api(stack.apiUrl, auth), 'A rows', settings.rows);

    for (let i = 0; i < 10; i++) await blockingRun(b, bWorkflow, i); // warm-up
    const idle: number[] = [];
    for (let i = 0; i < settings.samples; i++) idle.push(await blockingRun(b, bWorkflow, i));

    const batch = await must(
      admin.post(`/wf/${aWorkflow}/start_batch_run/`, { dataset_id: dataset, mini_batch_size: settings.mini }),
      'batch',
    );
    const status = async () =>
      (await must(admin.get(`/run/${batch.id as string}/status/`), 'batch status')) as {
        status: string;
        percentage_complete: number;
      };
    // B's runs are counted once A's rows have sent a window's worth of model calls, one a second,
    // so they sample every phase of the batch (starting rows, their calls, writing lines), not its
    // first second. Not from its first finished rows: a batch's progress counts rows contiguous from
    // the front, which under load can lag most of the batch.
    for (
      let s = await status();
      fake.requests.length < settings.mini && ['PENDING', 'RUNNING'].includes(s.status);
      s = await status()
    )
      await new Promise((r) => setTimeout(r, 200));
    const beside: number[] = [];
    const besideFrom = new Date();
    const sampler = new CpuSampler(stack.groups);
    const cpuBefore = sampler.sample();
    let last = await status();
    const until = Date.now() + 180_000;
    for (let i = 0; i < settings.samples && ['PENDING', 'RUNNING'].includes(last.status) && Date.now() < until; i++) {
      const started = Date.now();
      const ms = await blockingRun(b, bWorkflow, i);
      last = await status();
      await new Promise((r) => setTimeout(r, Math.max(0, 1000 - (Date.now() - started))));
      if (['PENDING', 'RUNNING'].includes(last.status)) beside.push(ms);
    }
    const cpu: CpuSample = {};
    accumulate(cpu, cpuBefore, sampler.sample());
    const besideSeconds = (Date.now() - besideFrom.getTime()) / 1000;
    const done = Math.round((last.percentage_complete * settings.rows) / 100);
    const waits = await queueWaits(stack.env.SPUR_TEMPORAL_ADDRESS as string, team.workspace, besideFrom, new Date());
    await must(admin.post(`/run/${batch.id as string}/cancel/`, {}), 'cancel').catch(() => undefined);
    for (let s = await status(); ['PENDING', 'RUNNING'].includes(s.status); s = await status())
      await new Promise((r) => setTimeout(r, 200));
    // Idle again, with the batch's records in the database: what is left is the data, not the load.
    const after: number[] = [];
    for (let i = 0; i < settings.samples; i++) after.push(await blockingRun(b, bWorkflow, i));
    b.close();
    return {
      idle,
      beside,
      after,
      batchDone: done,
      waits,
      busy: Object.fromEntries(Object.entries(cpu).map(([name, seconds]) => [name, seconds / besideSeconds])),
      batchStatus: last.status,
    };
  } finally {
    admin.close();
    await stack.stop();
    rmSync(tmp, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const fake = await startFakeLlmServer();
  fake.respondWith(() => ({ delayMs: settings.providerMs }));
  const results: { variant: Variant; outcome: Outcome }[] = [];
  try {
    for (const variant of VARIANTS) {
      fake.requests.length = 0;
      const outcome = await measure(variant, fake);
      console.log(
        `${variant.mode} mode, fair share ${variant.share}: B p50 idle ${median(outcome.idle).toFixed(0)} ms, beside the batch ${median(outcome.beside).toFixed(0)} ms (${outcome.beside.length} runs, the batch ${outcome.batchStatus} with ${outcome.batchDone} rows done), after it ${median(outcome.after).toFixed(0)} ms; in Temporal beside: p50 ${median(outcome.waits.total).toFixed(0)} ms, of it queued p50 ${median(outcome.waits.queued).toFixed(0)} ms (${outcome.waits.total.length} runs); cores busy beside: ${Object.entries(
          outcome.busy,
        )
          .map(([n, c]) => `${n} ${c.toFixed(2)}`)
          .join(', ')}`,
      );
      results.push({ variant, outcome });
    }
  } finally {
    await fake.close();
  }
  const row = ({ variant, outcome }: (typeof results)[number]) => {
    const ratio = median(outcome.beside) / median(outcome.idle);
    return `| ${variant.mode} | ${variant.share} | ${median(outcome.idle).toFixed(0)} | ${median(outcome.beside).toFixed(0)} | ${p90(outcome.beside).toFixed(0)} | ${ratio.toFixed(2)} | ${ratio <= TARGET_RATIO ? 'met' : 'MISSED'} | ${outcome.beside.length} | ${outcome.batchDone} | ${median(outcome.after).toFixed(0)} | ${median(outcome.waits.total).toFixed(0)} | ${median(outcome.waits.queued).toFixed(0)} | ${(outcome.busy.machine ?? 0).toFixed(2)} |`;
  };
  saveResults('fair-share-latest.md', [
    `# Fair-share benchmark — ${new Date().toISOString()}`,
    '',
    `Workspace A: a batch of ${settings.rows} rows, ${settings.mini} at a time, each row one model call answered in ${settings.providerMs} ms (fake provider on loopback).` +
      ` Workspace B: blocking runs of a 5-node workflow, one after another; ${settings.samples} idle, then from A's first ${settings.mini} model calls on one a second, up to ${settings.samples} while A's batch runs (only those that ended while it still ran count), then ${settings.samples} once it has been cancelled.` +
      ` Each line is a fresh stack (api and worker processes, Temporal dev server, FerretDB), ${os.cpus().length} cores.`,
    '',
    `| A's rows | fair share | B p50 idle (ms) | B p50 beside the batch (ms) | B p90 beside (ms) | × idle | ≤ ${TARGET_RATIO}× | B runs beside | A's rows done by then | B p50 after (ms) | B p50 in Temporal beside (ms) | of it queued, p50 (ms) | cores busy beside |`,
    '|---|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|',
    ...results.map(row),
  ]);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});

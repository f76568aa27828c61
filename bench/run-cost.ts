// What one durable run costs, over every process of the stack: CPU-ms per run of the api, the
// worker (split topology), Temporal and FerretDB, from /proc; MongoDB round trips per run by
// command (a counting proxy); the Temporal history of a run; and, in the same run of the bench on
// the same Temporal server, Temporal's floor for that history's shape (the same commands with
// nothing behind them: bench/lib/floor/workflows.ts `shaped`, its worker in this process), its
// blocks taking turns with the variants'.
//
// Variants: a 5-node pure run, one PythonFuncNode, one LLM call (a local fake OpenAI server), and
// the LLM run started with start_run and polled as PySpur's UI does. They take turns on one stack
// in blocks of runs at concurrency 10, so each meets the same database size and the same noise.
// Both topologies: `combined` (npm run dev: the api hosts the worker) and `split`.
//
// Usage: npx tsx bench/run-cost.ts [runs per variant=300]; BENCH_TOPOLOGIES=combined,split;
// BENCH_VARIANTS=short,pure picks variants by words of their names; BENCH_EXTRA_ENV (JSON) adds to
// the api's and worker's environment; BENCH_CPU_PROF_DIR adds V8 CPU profiles of both;
// BENCH_BASELINE=<commit> runs that commit's api and worker too, on the same servers, its blocks taking
// turns with this build's, and reports both and their ratios (a host whose speed drifts within minutes
// makes two separate runs incomparable). Writes bench/results/run-cost-latest.md.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { workerClass } from '../temporal/activation-watchdog';
import { runWorkflowId } from '../src/contracts/workflow-names';
import { installRuntime } from '../temporal/spur-worker';
import { type BaselineTree, checkOutBaseline } from './lib/baseline-tree';
import { CpuSampler, accumulate, cpuSource, type CpuSample } from './lib/cpu';
import { eventName, tallyEvents, type HistoryEvent } from './lib/history';
import { useFakeOpenAi } from './lib/fake-openai';
import { jsonClient, type JsonClient } from './lib/http';
import { startMongoCounter, type MongoCounter } from './lib/mongo-counter';
import { saveResults } from './lib/report';
import { SCENARIOS, type Scenario, echoes, runBody } from './lib/scenarios';
import { type Apps, type Stack, type Topology, startStack } from './lib/stack';
import { summarize } from './lib/stats';
import type { FloorStep } from './lib/floor/workflows';
import { startFakeLlmServer } from '../test/support/fake-llm-server';

const RUNS = Number(process.argv[2] ?? 300);
const CONCURRENCY = 10;
const BLOCK = 30;
const WARMUP_PER_VARIANT = 20;
const POLL_MS = 100;
const FLOOR_QUEUE = 'run-cost-floor';

/** One PythonFuncNode between the input and the output. */
const PYTHON_ONE: Scenario = {
  key: 'python1',
  label: 'one PythonFuncNode',
  nodes: [
    { id: 'in', title: 'in', node_type: 'InputNode', config: { output_schema: { text: 'string' } }, parent_id: null },
    {
      id: 'py',
      title: 'py',
      node_type: 'PythonFuncNode',
      // `in` is a Python keyword: the input node's output is read with getattr.
      config: { code: 'return {"text": getattr(input_model, "in").text}', output_schema: { text: 'string' } },
      parent_id: null,
    },
    { id: 'out', title: 'out', node_type: 'OutputNode', config: { output_map: { text: 'py.text' } }, parent_id: null },
  ],
  links: [
    { source_id: 'in', target_id: 'py', source_handle: null, target_handle: null },
    { source_id: 'py', target_id: 'out', source_handle: null, target_handle: null },
  ],
  lastNodeId: 'out',
};

interface Variant {
  name: string;
  scenario: Scenario;
  /** Issue 44's targets in CPU-ms per run over every process, by topology (none: reported only). */
  target?: Record<Topology, number>;
  /** `blocking`: POST run/ and its answer; `poll`: start_run/, then its status every POLL_MS until it ends. */
  mode: 'blocking' | 'poll';
}

const ALL_VARIANTS: Variant[] = [
  { name: '5-node pure', scenario: SCENARIOS.pure, mode: 'blocking', target: { combined: 28, split: 36 } },
  { name: 'one PythonFuncNode', scenario: PYTHON_ONE, mode: 'blocking', target: { combined: 40, split: 50 } },
  { name: 'one LLM call', scenario: SCENARIOS.llm, mode: 'blocking', target: { combined: 35, split: 45 } },
  {
    name: 'one short LLM call (timeout 30 s)',
    scenario: SCENARIOS.llmShort,
    mode: 'blocking',
    target: { combined: 35, split: 45 },
  },
  { name: 'one LLM call, start_run + poll', scenario: SCENARIOS.llm, mode: 'poll' },
];

/** BENCH_VARIANTS: a comma-separated list of words; a variant runs when its name holds one (all by default). */
const VARIANTS = ((words) =>
  words.length === 0 ? ALL_VARIANTS : ALL_VARIANTS.filter((v) => words.some((w) => v.name.includes(w))))(
  (process.env.BENCH_VARIANTS ?? '')
    .split(',')
    .map((w) => w.trim())
    .filter((w) => w !== ''),
);

/** MongoDB round trips per one-LLM-call run, at most (either topology). */
const LLM_TRIPS_TARGET = 5;

interface Tally {
  runs: number;
  /** Wall time of its blocks, in ms: runs per second at CONCURRENCY. */
  wallMs: number;
  cpu: CpuSample;
  trips: Record<string, number>;
  latencies: number[];
  /** CPU-ms per run over every process, block by block: their median sets two builds side by side. */
  blocks: number[];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function oneRun(http: JsonClient, workflowId: string, variant: Variant, seq: number) {
  const text = `cost-${seq}`;
  const t0 = performance.now();
  if (variant.mode === 'blocking') {
    const res = await http.post(`/wf/${workflowId}/run/`, runBody(text));
    if (res.status !== 200 || !echoes(variant.scenario, res.body, text)) {
      // A blocking answer holds outputs only: the run's record says why it failed.
      const [run] = (await http.get(`/wf/${workflowId}/runs/?page_size=1`)).body as Array<{ message?: string }>;
      throw new Error(
        `${variant.name} (sent ${text}): HTTP ${res.status} ${JSON.stringify(res.body).slice(0, 300)}; newest run: ${run?.message}`,
      );
    }
    return performance.now() - t0;
  }
  const started = await http.post(`/wf/${workflowId}/start_run/`, runBody(text));
  const runId = (started.body as { id?: string }).id;
  if (started.status !== 200 || !runId) throw new Error(`start_run: HTTP ${started.status}`);
  for (;;) {
    await sleep(POLL_MS);
    const res = await http.get(`/runs/${runId}/status/`);
    const status = (res.body as { status?: string }).status;
    if (status === 'COMPLETED') return performance.now() - t0;
    if (status !== 'PENDING' && status !== 'RUNNING') throw new Error(`run ${runId}: ${status}`);
  }
}

/** `count` runs of a variant, CONCURRENCY at a time: their latencies. */
async function runBlock(http: JsonClient, workflowId: string, variant: Variant, count: number, seq0: number) {
  let next = 0;
  const latencies: number[] = [];
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < count) latencies.push(await oneRun(http, workflowId, variant, seq0 + next++));
    }),
  );
  return latencies;
}

/** The commands of a run's history, in order: what its floor workflow repeats. */
function shapeOf(events: HistoryEvent[]): FloorStep[] {
  const steps: FloorStep[] = [];
  for (const e of events) {
    const name = eventName(e);
    if (name === 'MARKER_RECORDED') steps.push('local');
    else if (name === 'ACTIVITY_TASK_SCHEDULED') steps.push('activity');
    else if (name === 'UPSERT_WORKFLOW_SEARCH_ATTRIBUTES') steps.push('upsert');
  }
  return steps;
}

/** The build a tally is of: this tree's, or BENCH_BASELINE's. */
interface Build {
  /** '' for this tree; the baseline's short commit otherwise. */
  commit: string;
  http: JsonClient;
  groups: Record<string, number>;
  workflowIds: Map<Scenario, string>;
  /** Its runs' Temporal workflow ids start with this (SPUR_WORKFLOW_ID_PREFIX). */
  prefix: string;
}

/** A variant's history, read off one of its runs: what its floor repeats. */
interface RunShape {
  history: Record<string, number>;
  events: number;
  shape: FloorStep[];
}

/** A floor shape's blocks so far: runs, and the CPU-seconds of Temporal and of this process. */
interface FloorTally {
  shape: FloorStep[];
  runs: number;
  temporal: number;
  bench: number;
}

interface Measured {
  build: string;
  variant: Variant;
  tally: Tally;
  history: Record<string, number>;
  events: number;
  shape: FloorStep[];
  floor: { cpuMs: number; temporalMs: number; workerMs: number };
}

async function measureTopology(
  topology: Topology,
  baseline: BaselineTree | undefined,
): Promise<{ measured: Measured[] }> {
  const tmp = mkdtempSync(path.join(os.tmpdir(), `spur-cost-${topology}-`));
  let counter: MongoCounter | undefined;
  const fake = await startFakeLlmServer();
  const stack: Stack = await startStackOrClose(fake, {
    tmpDir: tmp,
    topology,
    // The fake provider is on loopback, which the outbound policy refuses by default.
    extraEnv: {
      SPUR_OUTBOUND_ALLOW_PRIVATE: 'true',
      ...(process.env.BENCH_EXTRA_ENV ? (JSON.parse(process.env.BENCH_EXTRA_ENV) as Record<string, string>) : {}),
    },
    mongoUri: async (uri) => {
      const { hostname, port } = new URL(uri);
      counter = await startMongoCounter({ host: hostname, port: Number(port) });
      return counter.uri;
    },
    ...(baseline ? { baseline: { root: baseline.root } } : {}),
  });
  const servers = { temporal: stack.groups.temporal, ferretdb: stack.groups.ferretdb };
  const buildOf = (commit: string, apps: Pick<Apps, 'apiUrl' | 'groups' | 'env'>): Build => ({
    commit,
    http: jsonClient(apps.apiUrl),
    // The servers are shared: blocks run one at a time, so their CPU during a block is that build's.
    groups: { ...apps.groups, ...servers },
    workflowIds: new Map(),
    prefix: apps.env.SPUR_WORKFLOW_ID_PREFIX ?? '',
  });
  const builds = [
    buildOf('', stack),
    ...(stack.baseline && baseline ? [buildOf(baseline.commit, stack.baseline)] : []),
  ];
  const temporalAddress = stack.env.SPUR_TEMPORAL_ADDRESS ?? '';
  const connection = await NativeConnection.connect({ address: temporalAddress });
  // Spur's own Worker class: the floor's workflow code runs as Spur's does.
  const worker = await workerClass(undefined).create({
    connection,
    taskQueue: FLOOR_QUEUE,
    workflowsPath: require.resolve('./lib/floor/workflows'),
    activities: { noop: async () => undefined, noopActivity: async () => undefined },
  });
  const floorWorker = worker.run();
  // The floor's blocks: Temporal's CPU, and this process's (`bench`: the floor's client and worker).
  const floorSampler = new CpuSampler({ temporal: stack.groups.temporal });
  const client = new Client({ connection });
  try {
    for (const build of builds) {
      await useFakeOpenAi(build.http, fake.url);
      for (const { scenario } of VARIANTS) {
        if (build.workflowIds.has(scenario)) continue;
        const res = await build.http.post('/wf/', {
          name: `cost: ${scenario.label}`,
          definition: { nodes: scenario.nodes, links: scenario.links },
        });
        if (res.status !== 200) throw new Error(`create ${scenario.label}: ${res.status} ${JSON.stringify(res.body)}`);
        build.workflowIds.set(scenario, (res.body as { id: string }).id);
      }
    }
    const idOf = (b: Build, v: Variant) => b.workflowIds.get(v.scenario) as string;
    let seq = 0;
    for (const b of builds)
      for (const v of VARIANTS) {
        await runBlock(b.http, idOf(b, v), v, WARMUP_PER_VARIANT, seq);
        seq += WARMUP_PER_VARIANT;
      }
    // Each variant's history shape, from its newest warm-up run: what its floor repeats.
    const shapes = new Map<string, RunShape>();
    for (const build of builds)
      for (const variant of VARIANTS) {
        const [newest] = (await build.http.get(`/wf/${idOf(build, variant)}/runs/?page_size=1`)).body as Array<{
          id: string;
        }>;
        const handle = client.workflow.getHandle(runWorkflowId(newest?.id ?? '', build.prefix));
        const events = (await handle.fetchHistory()).events ?? [];
        shapes.set(`${build.commit}/${variant.name}`, {
          history: tallyEvents(events),
          events: events.length,
          shape: shapeOf(events),
        });
      }
    const floors = new Map<string, FloorTally>();
    for (const { shape } of shapes.values()) {
      const key = shape.join(',');
      if (floors.has(key)) continue;
      await floorBlock(client, shape, WARMUP_PER_VARIANT);
      floors.set(key, { shape, runs: 0, temporal: 0, bench: 0 });
    }
    const samplers = builds.map((b) => new CpuSampler(b.groups));
    const cells = builds.flatMap((build, b) =>
      VARIANTS.map((variant) => ({
        build,
        variant,
        sampler: samplers[b] as CpuSampler,
        tally: { runs: 0, wallMs: 0, cpu: {}, trips: {}, latencies: [], blocks: [] } as Tally,
      })),
    );
    // Blocks take turns (each variant on each build, then each floor shape), so every cell meets the
    // same database size and the same neighbours, and the floors the same drift of the host's speed.
    while (cells.some((c) => c.tally.runs < RUNS)) {
      for (const { build, variant: v, sampler, tally } of cells) {
        const count = Math.min(BLOCK, RUNS - tally.runs);
        if (count <= 0) continue;
        counter?.reset();
        const before = sampler.sample();
        const t0 = performance.now();
        const block = await runBlock(build.http, idOf(build, v), v, count, seq);
        tally.wallMs += performance.now() - t0;
        const after = sampler.sample();
        const used: CpuSample = {};
        accumulate(used, before, after);
        accumulate(tally.cpu, before, after);
        tally.blocks.push((1000 * PROCESSES.reduce((sum, g) => sum + (used[g] ?? 0), 0)) / count);
        for (const [k, n] of Object.entries(counter?.counts() ?? {})) tally.trips[k] = (tally.trips[k] ?? 0) + n;
        seq += count;
        tally.runs += count;
        tally.latencies.push(...block);
      }
      for (const floor of floors.values()) {
        const count = Math.min(BLOCK, RUNS - floor.runs);
        if (count <= 0) continue;
        const used = await floorBlock(client, floor.shape, count);
        floor.runs += count;
        floor.temporal += used.temporal ?? 0;
        floor.bench += used.bench ?? 0;
      }
    }
    const measured: Measured[] = [];
    for (const { build, variant, tally } of cells) {
      const { history, events, shape } = shapes.get(`${build.commit}/${variant.name}`) as RunShape;
      const f = floors.get(shape.join(',')) as FloorTally;
      const per = (seconds: number) => (1000 * seconds) / f.runs;
      const floor = { cpuMs: per(f.temporal + f.bench), temporalMs: per(f.temporal), workerMs: per(f.bench) };
      measured.push({ build: build.commit, variant, tally, history, events, shape, floor });
    }
    return { measured };
  } finally {
    worker.shutdown();
    await floorWorker.catch(() => undefined);
    await connection.close();
    for (const b of builds) b.http.close();
    await stack.stop();
    await counter?.close();
    await fake.close();
    rmSync(tmp, { recursive: true, force: true });
  }

  /**
   * `count` workflows of `shape` on the same server, CONCURRENCY at a time, eager start as the dev
   * topology: the CPU-seconds of Temporal and of this process (their client and worker) meanwhile.
   */
  async function floorBlock(client: Client, shape: FloorStep[], count: number): Promise<CpuSample> {
    const start = (i: number) =>
      client.workflow.execute('shaped', {
        taskQueue: FLOOR_QUEUE,
        workflowId: `floor-${shape.join('-')}-${i}-${Date.now()}`,
        args: [shape],
        requestEagerStart: true,
      });
    const before = floorSampler.sample();
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next++ < count) await start(next);
      }),
    );
    const used: CpuSample = {};
    accumulate(used, before, floorSampler.sample());
    return used;
  }
}

/** The stack, or the fake provider closed again when it does not come up. */
async function startStackOrClose(fake: { close(): Promise<void> }, options: Parameters<typeof startStack>[0]) {
  try {
    return await startStack(options);
  } catch (err) {
    await fake.close();
    throw err;
  }
}

const f = (n: number, d = 1) => (Number.isFinite(n) ? n.toFixed(d) : '–');

/** Every process of either topology, in the table's order (combined has no worker of its own). */
const PROCESSES = ['api', 'worker', 'temporal', 'ferretdb'] as const;

/** One table row per variant and topology, the verdicts on the targets, and each variant's details. */
function report(topology: Topology, measured: Measured[]) {
  const rows: string[] = [];
  const verdicts: string[] = [];
  const details: string[] = [];
  for (const { build, variant, tally, events, floor, history, shape } of measured) {
    const name = build ? `${variant.name} — baseline ${build}` : variant.name;
    const per = (s: number | undefined) => (1000 * (s ?? 0)) / tally.runs;
    const total = PROCESSES.reduce((sum, g) => sum + per(tally.cpu[g]), 0);
    const trips = Object.values(tally.trips).reduce((s, n) => s + n, 0) / tally.runs;
    rows.push(
      `| ${topology} | ${name} | ${PROCESSES.map((g) => (g in tally.cpu ? f(per(tally.cpu[g])) : '–')).join(' | ')} | **${f(total)}** | ${f(floor.cpuMs)} | ${f(trips, 2)} | ${events} | ${f(summarize(tally.latencies).p50)} | ${f((1000 * tally.runs) / tally.wallMs)} |`,
    );
    details.push(
      `- **${name}** (${topology}): round trips ${Object.entries(tally.trips)
        .sort((a, b) => b[1] - a[1])
        .map(([k, n]) => `${k} ${f(n / tally.runs, 2)}`)
        .join(', ')}`,
      `  - history: ${Object.entries(history)
        .map(([k, n]) => `${k} ${n}`)
        .join(', ')}`,
      `  - floor shape [${shape.join(', ')}]: Temporal ${f(floor.temporalMs)} + client and worker ${f(floor.workerMs)} CPU-ms`,
    );
    // The targets are this build's; a baseline's row is there to be compared with.
    if (build) continue;
    const target = variant.target?.[topology];
    if (target !== undefined)
      verdicts.push(
        `- target ${variant.name} (${topology}) ≤ ${target} CPU-ms: ${f(total)} (${total <= target ? 'met' : 'MISSED'}; Temporal's floor for its shape ${f(floor.cpuMs)})`,
      );
    if (variant.scenario.key.startsWith('llm') && variant.mode === 'blocking')
      verdicts.push(
        `- target MongoDB round trips per run, ${variant.name} (${topology}) ≤ ${LLM_TRIPS_TARGET}: ${f(trips, 2)} (${trips <= LLM_TRIPS_TARGET ? 'met' : 'MISSED'})`,
      );
  }
  return { rows, verdicts, details, ratios: ratios(topology, measured) };
}

/**
 * Per variant, this build against the baseline: the median over blocks of CPU-ms per run (blocks
 * alternate, so a drifting host weighs on both alike), and runs per second at CONCURRENCY.
 */
function ratios(topology: Topology, measured: Measured[]): string[] {
  const lines: string[] = [];
  for (const base of measured.filter((m) => m.build !== '')) {
    const main = measured.find((m) => m.build === '' && m.variant === base.variant);
    if (!main) continue;
    const [cpuMain, cpuBase] = [summarize(main.tally.blocks).p50, summarize(base.tally.blocks).p50];
    const rate = (t: Tally) => (1000 * t.runs) / t.wallMs;
    lines.push(
      `- ${base.variant.name} (${topology}), this build vs ${base.build}: CPU-ms per run (median of ${main.tally.blocks.length} blocks) ${f(cpuMain)} vs ${f(cpuBase)} (×${f(cpuMain / cpuBase, 2)}); runs/s ${f(rate(main.tally))} vs ${f(rate(base.tally))} (×${f(rate(main.tally) / rate(base.tally), 2)})`,
    );
  }
  return lines;
}

async function main(): Promise<void> {
  installRuntime();
  const topologies = (process.env.BENCH_TOPOLOGIES ?? 'combined,split').split(',') as Topology[];
  const started = Date.now();
  const baseline = process.env.BENCH_BASELINE ? checkOutBaseline(process.env.BENCH_BASELINE) : undefined;
  const parts = [];
  try {
    for (const topology of topologies)
      parts.push(report(topology, (await measureTopology(topology, baseline)).measured));
  } finally {
    baseline?.remove();
  }
  saveResults('run-cost-latest.md', [
    `# Cost of a durable run — ${new Date().toISOString()}`,
    '',
    `${RUNS} runs of each variant at concurrency ${CONCURRENCY}, in blocks of ${BLOCK} taking turns, after ${WARMUP_PER_VARIANT} warm-up runs each; combined is \`npm run dev\`'s topology (the api hosts the worker). CPU-ms per run over every process of the stack, read from ${cpuSource()} (the bench process, which hosts the fake provider and the load, is left out); Temporal's floor: the same history's commands with nothing behind them, on the same Temporal server, its worker and client in the bench process (their CPU counted), in blocks taking turns with the variants'. Load average at the end ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}; ${((Date.now() - started) / 1000).toFixed(0)} s.`,
    '',
    ...(process.env.BENCH_EXTRA_ENV ? [`Extra environment: \`${process.env.BENCH_EXTRA_ENV}\``, ''] : []),
    `| topology | variant | ${PROCESSES.join(' | ')} | **total CPU-ms** | Temporal floor | MongoDB round trips | history events | p50 ms | runs/s |`,
    `| --- | --- | ${PROCESSES.map(() => '---:').join(' | ')} | ---: | ---: | ---: | ---: | ---: | ---: |`,
    ...parts.flatMap((p) => p.rows),
    '',
    ...parts.flatMap((p) => p.verdicts),
    '',
    ...(baseline
      ? [
          `Against the baseline (${baseline.commit}), its api and worker on the same servers, blocks taking turns:`,
          '',
          ...parts.flatMap((p) => p.ratios),
          '',
        ]
      : []),
    'Per variant: round trips by command, the history of one run, and the floor its shape costs.',
    '',
    ...parts.flatMap((p) => p.details),
  ]);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});

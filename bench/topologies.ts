// `npm run bench`: its own Temporal + FerretDB stack on free ports, the api and one worker as
// separate processes, then: sequential blocking-run latency (1-node reference, A: 5 pure nodes,
// B: 5 nodes with a PythonFuncNode) interleaved run by run with an in-process baseline of the same
// graphs (pure compute; compute + the same MongoDB traffic), then throughput at concurrency 50;
// CPU per process throughout. Prints a table; writes bench/results/<timestamp>.json and
// bench/results/latest.md.
// Nothing is asserted: the exit code is 0 unless the bench broke or a run failed.
//
// Knobs (environment): BENCH_RUNS (1000 sequential rounds), BENCH_WARMUP (50), BENCH_SEQ_SECONDS
// (270, cap of the sequential phase), BENCH_CONCURRENCY (50), BENCH_LOAD_RUNS (2000) and
// BENCH_LOAD_SECONDS (60) for A under load, BENCH_LOAD_PY_RUNS (1000) and BENCH_LOAD_PY_SECONDS
// (20) for B, BENCH_BASELINE_EVERY (2: the baselines that spawn python3 or write run every 2nd round),
// BENCH_TEMPORAL_DYNAMIC_CONFIG (JSON object of dev-server dynamic config), BENCH_SQLITE_SYNC (normal;
// full = an fsync per SQLite commit), BENCH_TOPOLOGY (split; combined = api hosting the worker, eager
// workflow start), BENCH_LABEL.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Connection } from 'mongoose';
import { connectMongo } from '../src/db/connection';
import { createModels } from '../src/db/models';
import type { WorkflowDefinition } from '../src/definitions/definition.schema';
import { createMongoBaseline, executeInProcess, planOf } from './lib/baseline';
import { CORES, CpuSampler, cpuUsage } from './lib/cpu';
import { jsonClient, type JsonClient } from './lib/http';
import { type LoadResult, type Step, engineStep, inProcessStep, runConcurrent, runInterleaved } from './lib/load';
import { type BenchReport, type Derived, type PhaseKind, type PhaseResult, markdown, textTable } from './lib/report';
import { SCENARIOS, type Scenario, type ScenarioKey, runBody } from './lib/scenarios';
import { type Stack, sqliteSyncEnv, startStack, topologyEnv } from './lib/stack';
import { median, summarize } from './lib/stats';
import { REPO_ROOT } from '../scripts/lib/tools';
import { intEnv } from './lib/env';

function dynamicConfigEnv(): Record<string, string | number | boolean> | undefined {
  const raw = process.env.BENCH_TEMPORAL_DYNAMIC_CONFIG;
  if (!raw) return undefined;
  const parsed: unknown = JSON.parse(raw);
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new Error('BENCH_TEMPORAL_DYNAMIC_CONFIG must be a JSON object');
  return parsed as Record<string, string | number | boolean>;
}

const settings = {
  runs: intEnv('BENCH_RUNS', 1000),
  warmup: intEnv('BENCH_WARMUP', 50),
  seqSeconds: intEnv('BENCH_SEQ_SECONDS', 270),
  concurrency: intEnv('BENCH_CONCURRENCY', 50),
  loadRuns: intEnv('BENCH_LOAD_RUNS', 2000),
  loadSeconds: intEnv('BENCH_LOAD_SECONDS', 60),
  loadPyRuns: intEnv('BENCH_LOAD_PY_RUNS', 1000),
  loadPySeconds: intEnv('BENCH_LOAD_PY_SECONDS', 20),
  baselineEvery: Math.max(1, intEnv('BENCH_BASELINE_EVERY', 2)),
  temporalDynamicConfig: dynamicConfigEnv(),
  sqliteSync: sqliteSyncEnv(),
  topology: topologyEnv(),
  label: process.env.BENCH_LABEL ?? null,
};

const TOPOLOGIES = {
  split:
    'api = src/processes/api.ts in its own process; one worker = src/processes/worker.ts in its own process (prebuilt bundle)',
  combined:
    'api and worker in one process (src/processes/combined.ts, eager workflow start; its CPU is in the api column)',
};
const TOPOLOGY = `${TOPOLOGIES[settings.topology]}; load generator and baselines in the bench process`;

const log = (line: string) => console.log(`bench: ${line}`);

function phase(
  name: string,
  scenario: Scenario,
  kind: PhaseKind,
  concurrency: number,
  r: LoadResult,
  capped: boolean,
): PhaseResult {
  const tenth = Math.max(1, Math.floor(r.latenciesMs.length / 10));
  const result: PhaseResult = {
    name,
    scenario: scenario.key,
    kind,
    concurrency,
    runs: r.latenciesMs.length,
    capped,
    failures: r.failures,
    failureSamples: r.failureSamples,
    latencyMs: summarize(r.latenciesMs),
    runsPerSecond: r.latenciesMs.length / r.wallSeconds,
    wallSeconds: r.wallSeconds,
    cpu: cpuUsage(r.cpu, r.wallSeconds, r.latenciesMs.length),
    drift: { firstTenthP50: median(r.latenciesMs.slice(0, tenth)), lastTenthP50: median(r.latenciesMs.slice(-tenth)) },
  };
  const l = result.latencyMs;
  log(
    `${name}: ${result.runs} runs${capped ? ' (time cap)' : ''}, p50 ${l.p50.toFixed(1)} / p99 ${l.p99.toFixed(1)} ms, ${result.runsPerSecond.toFixed(1)} runs/s, ${r.failures} failures, other load ${result.cpu.percentOfCore.other?.toFixed(0)} % of a core`,
  );
  return result;
}

type Workflows = Record<ScenarioKey, { id: string; definition: WorkflowDefinition }>;

async function createWorkflows(http: JsonClient): Promise<Workflows> {
  const out: Partial<Workflows> = {};
  for (const [key, scenario] of Object.entries(SCENARIOS) as [ScenarioKey, Scenario][]) {
    const res = await http.post('/wf/', {
      name: `bench ${scenario.label}`,
      definition: { nodes: scenario.nodes, links: scenario.links },
    });
    if (res.status !== 200 && res.status !== 201)
      throw new Error(`creating workflow ${key}: HTTP ${res.status} ${JSON.stringify(res.body)}`);
    const body = res.body as { id: string; definition: WorkflowDefinition };
    out[key] = { id: body.id, definition: body.definition };
  }
  return out as Workflows;
}

interface StepSpec {
  step: Step;
  scenario: ScenarioKey;
  kind: PhaseKind;
}

/** Sequential steps: the engine scenarios and, interleaved with them, the in-process baselines. */
function sequentialSteps(http: JsonClient, mongo: Connection, workflows: Workflows): StepSpec[] {
  const engine = (name: string, key: ScenarioKey): StepSpec => ({
    step: engineStep(name, http, { scenario: SCENARIOS[key], workflowId: workflows[key].id }),
    scenario: key,
    kind: 'engine',
  });
  const mongoBaseline = createMongoBaseline(createModels(mongo));
  const inputs = runBody('baseline').initial_inputs;
  const baselines = (
    [
      ['pure', 'A'],
      ['python', 'B'],
    ] as const
  ).flatMap(([key, label]): StepSpec[] => {
    const { level } = planOf(workflows[key].definition);
    // Pure compute takes microseconds: every round. What spawns python3 or writes: every n-th.
    const computeEvery = key === 'pure' ? 1 : settings.baselineEvery;
    return [
      {
        step: inProcessStep(`${label} compute`, () => executeInProcess(level, inputs.in ?? {}), computeEvery),
        scenario: key,
        kind: 'baseline-compute',
      },
      {
        step: inProcessStep(
          `${label} compute+mongo`,
          () => mongoBaseline(workflows[key].id, inputs),
          settings.baselineEvery,
        ),
        scenario: key,
        kind: 'baseline-mongo',
      },
    ];
  });
  return [engine('1-node seq', 'one'), engine('A pure seq', 'pure'), engine('B python seq', 'python'), ...baselines];
}

async function measure(
  http: JsonClient,
  mongo: Connection,
  workflows: Workflows,
  sampler: CpuSampler,
  phases: PhaseResult[],
): Promise<void> {
  const specs = sequentialSteps(http, mongo, workflows);
  const steps = specs.map((s) => s.step);
  log(`warm-up: ${settings.warmup} rounds of ${steps.map((s) => s.name).join(', ')}`);
  const warm = await runInterleaved(steps, settings.warmup, 600, sampler);
  const broken = warm.results.find((r) => r.failures > 0);
  if (broken) throw new Error(`warm-up runs failed: ${broken.failureSamples.join(' / ')}`);

  log(
    `sequential: up to ${settings.runs} rounds (cap ${settings.seqSeconds} s); slow baselines every ${settings.baselineEvery} rounds`,
  );
  const seq = await runInterleaved(steps, settings.runs, settings.seqSeconds, sampler);
  const results = specs.map((spec, i) =>
    phase(spec.step.name, SCENARIOS[spec.scenario], spec.kind, 1, seq.results[i] as LoadResult, seq.capped),
  );

  const load: PhaseResult[] = [];
  const c = settings.concurrency;
  for (const [key, label, runs, seconds] of [
    ['pure', 'A pure', settings.loadRuns, settings.loadSeconds],
    ['python', 'B python', settings.loadPyRuns, settings.loadPySeconds],
  ] as const) {
    if (runs === 0) continue;
    log(`${label} at c=${c}: up to ${runs} runs (cap ${seconds} s, then the runs in flight finish)`);
    const r = await runConcurrent(
      http,
      { scenario: SCENARIOS[key], workflowId: workflows[key].id },
      runs,
      c,
      seconds,
      sampler,
    );
    load.push(phase(`${label} c=${c}`, SCENARIOS[key], 'engine', c, r, r.capped));
  }
  phases.push(...results.filter((p) => p.kind === 'engine'), ...load, ...results.filter((p) => p.kind !== 'engine'));
}

let staleKeepAliveRetries = 0;

async function runPhases(stack: Stack, phases: PhaseResult[]): Promise<Record<string, number>> {
  const http = jsonClient(stack.apiUrl, Math.max(64, settings.concurrency + 8));
  const mongo = await connectMongo({
    mongo: {
      uri: stack.env.SPUR_MONGODB_URI as string,
      dbName: stack.env.SPUR_MONGODB_DB as string,
      timeoutMs: 10_000,
    },
  });
  try {
    const workflows = await createWorkflows(http);
    await measure(http, mongo, workflows, new CpuSampler(stack.groups), phases);
    const counts: Record<string, number> = {};
    const db = mongo.db;
    if (db)
      for (const { name } of await db.listCollections({}, { nameOnly: true }).toArray())
        counts[name] = await db.collection(name).countDocuments();
    return counts;
  } finally {
    staleKeepAliveRetries = http.staleRetries;
    http.close();
    await mongo.close();
  }
}

function derive(phases: PhaseResult[], documentsAtEnd: Record<string, number>): Derived {
  const find = (name: string) => phases.find((p) => p.name === name);
  const p50 = (name: string) => find(name)?.latencyMs.p50 ?? Number.NaN;
  const derived: Derived = { perNodeOverheadMs: {}, ratios: {}, targets: [], documentsAtEnd };
  for (const [label, prefix] of [
    ['A pure', 'A'],
    ['B python', 'B'],
  ] as const) {
    derived.perNodeOverheadMs[label] = (p50(`${label} seq`) - p50('1-node seq')) / 4;
    derived.ratios[label] = {
      vsCompute: p50(`${label} seq`) / p50(`${prefix} compute`),
      vsComputeMongo: p50(`${label} seq`) / p50(`${prefix} compute+mongo`),
    };
  }
  const a = find('A pure seq');
  const load = find(`A pure c=${settings.concurrency}`);
  if (a) {
    derived.targets.push({
      name: 'A p50',
      target: '≤ 40 ms',
      value: `${a.latencyMs.p50.toFixed(1)} ms`,
      ok: a.latencyMs.p50 <= 40,
    });
    derived.targets.push({
      name: 'A p99',
      target: '≤ 150 ms',
      value: `${a.latencyMs.p99.toFixed(1)} ms`,
      ok: a.latencyMs.p99 <= 150,
    });
  }
  if (load) {
    derived.targets.push({
      name: `A c=${settings.concurrency}`,
      target: '≥ 50 runs/s, 0 failures',
      value: `${load.runsPerSecond.toFixed(1)} runs/s, ${load.failures} failures`,
      ok: load.runsPerSecond >= 50 && load.failures === 0,
    });
  }
  return derived;
}

function gitCommit(): string | null {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: REPO_ROOT, encoding: 'utf8' }).trim();
  } catch {
    return null;
  }
}

async function main(): Promise<number> {
  const started = Date.now();
  const startedAt = new Date(started).toISOString();
  const loadAverageAtStart = os.loadavg();
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'spur-bench-'));
  let stack: Stack | undefined;
  let code = 1;
  const stopAll = async () => {
    await stack?.stop();
  };
  process.once('SIGINT', () => void stopAll().then(() => process.exit(130)));
  process.once('SIGTERM', () => void stopAll().then(() => process.exit(143)));
  const phases: PhaseResult[] = [];
  let documentsAtEnd: Record<string, number> = {};
  try {
    log(`settings ${JSON.stringify(settings)}`);
    stack = await startStack({
      tmpDir: tmp,
      ...(settings.temporalDynamicConfig ? { temporalDynamicConfig: settings.temporalDynamicConfig } : {}),
    });
    log(`stack up in ${stack.startSeconds.toFixed(1)} s (logs in ${tmp}); ${TOPOLOGY}`);
    documentsAtEnd = await runPhases(stack, phases);
    code = phases.some((p) => p.failures > 0) ? 2 : 0;
  } catch (err) {
    console.error('bench failed:', err);
  } finally {
    await stopAll();
  }
  if (phases.length > 0) {
    const report: BenchReport = {
      startedAt,
      durationSeconds: (Date.now() - started) / 1000,
      stackStartSeconds: stack?.startSeconds ?? Number.NaN,
      machine: {
        cpus: CORES,
        cpuModel: os.cpus()[0]?.model ?? 'unknown',
        node: process.version,
        commit: gitCommit(),
        loadAverageAtStart,
        loadAverageAtEnd: os.loadavg(),
      },
      topology: TOPOLOGY,
      settings,
      staleKeepAliveRetries,
      phases,
      derived: derive(phases, documentsAtEnd),
    };
    const dir = path.join(REPO_ROOT, 'bench', 'results');
    mkdirSync(dir, { recursive: true });
    const jsonFile = path.join(dir, `${startedAt.replace(/[:.]/g, '-')}.json`);
    writeFileSync(jsonFile, `${JSON.stringify(report, null, 2)}\n`);
    const latest = settings.topology === 'combined' ? 'latest-combined.md' : 'latest.md';
    writeFileSync(path.join(dir, latest), markdown(report));
    console.log(`\n${textTable(report)}\n`);
    log(`results: ${path.relative(REPO_ROOT, jsonFile)}, bench/results/${latest}`);
  }
  if (code === 0) rmSync(tmp, { recursive: true, force: true });
  else console.error(`bench: logs kept in ${tmp}`);
  return code;
}

void main().then((code) => process.exit(code));

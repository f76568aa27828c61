// Spur beside PySpur on the same machine, same workflow (bench/lib/vs-scenario.ts), same client:
// blocking runs one at a time, Spur and PySpur interleaved run by run (same noise for both), then
// throughput at concurrency 20 for each in turn; CPU per run from /proc for every process. Both of
// Spur's topologies are measured: split (production: api and worker apart) and combined (api
// hosting the worker, eager workflow start). Prints one table with the ratios; writes
// bench/results/vs-pyspur-<timestamp>.json and vs-pyspur-latest.md. Nothing is asserted.
//
// PySpur 0.1.18 (`serve --sqlite`) cannot serve 20 blocking runs at once: its SQLAlchemy pool (5 +
// 10 connections) runs dry, requests wait 30 s per connection and fail with HTTP 500. So PySpur is
// also measured at BENCH_VS_PYSPUR_CONCURRENCY (8), which it serves without a failure, before the
// c=20 attempt; the throughput ratio is taken against the best rate PySpur sustains with 0 failed.
//
// Knobs: BENCH_VS_RUNS (400 rounds), BENCH_VS_WARMUP (30), BENCH_VS_SEQ_SECONDS (150 per topology),
// BENCH_VS_CONCURRENCY (20), BENCH_VS_PYSPUR_CONCURRENCY (8), BENCH_VS_LOAD_RUNS (1000),
// BENCH_VS_LOAD_SECONDS (60), BENCH_VS_TOPOLOGIES (split,combined).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type CpuSample, CpuSampler, accumulate } from './lib/cpu';
import { type JsonClient, jsonClient } from './lib/http';
import { type Step, runInterleaved } from './lib/load';
import { PYSPUR_VERSION, startPySpur } from './lib/pyspur-server';
import { type Topology, startStack } from './lib/stack';
import { msSince, summarize } from './lib/stats';
import { VS_WORKFLOW, vsAnswerOk, vsRunBody } from './lib/vs-scenario';
import { REPO_ROOT } from '../scripts/lib/tools';
import { intEnv } from './lib/env';

const settings = {
  runs: intEnv('BENCH_VS_RUNS', 400),
  warmup: intEnv('BENCH_VS_WARMUP', 30),
  seqSeconds: intEnv('BENCH_VS_SEQ_SECONDS', 150),
  concurrency: intEnv('BENCH_VS_CONCURRENCY', 20),
  pyspurConcurrency: intEnv('BENCH_VS_PYSPUR_CONCURRENCY', 8),
  loadRuns: intEnv('BENCH_VS_LOAD_RUNS', 1000),
  loadSeconds: intEnv('BENCH_VS_LOAD_SECONDS', 60),
  topologies: (process.env.BENCH_VS_TOPOLOGIES ?? 'split,combined').split(',') as Topology[],
};
/** What `npm run dev` starts (scripts/dev.ts, SPUR_DEV_TOPOLOGY's default); the targets are judged on it. */
const DEV_TOPOLOGY: Topology = 'combined';
const SPUR_PROCESSES = ['api', 'worker', 'temporal', 'ferretdb'] as const;
const log = (line: string) => console.log(`vs-pyspur: ${line}`);

interface Row {
  system: string;
  phase: string;
  runs: number;
  failures: number;
  p50: number;
  p99: number;
  runsPerSecond: number;
  cpuMsPerRun: number;
  failureSamples: string[];
}

function blockingStep(name: string, http: JsonClient, workflowId: string): Step {
  return {
    name,
    async once(seq) {
      const text = `bench-${seq}-${Math.random().toString(36).slice(2, 8)}`;
      const started = process.hrtime.bigint();
      try {
        const res = await http.post(`/wf/${workflowId}/run/`, vsRunBody(text));
        const ms = msSince(started);
        if (res.status !== 200) return { ms, error: `HTTP ${res.status}: ${JSON.stringify(res.body).slice(0, 200)}` };
        return {
          ms,
          error: vsAnswerOk(res.body, text) ? null : `wrong answer: ${JSON.stringify(res.body).slice(0, 200)}`,
        };
      } catch (err) {
        return { ms: msSince(started), error: (err as Error).message };
      }
    },
  };
}

async function createWorkflow(http: JsonClient): Promise<string> {
  const res = await http.post('/wf/', VS_WORKFLOW);
  if (res.status !== 200 && res.status !== 201)
    throw new Error(`creating the workflow: HTTP ${res.status} ${JSON.stringify(res.body)}`);
  return (res.body as { id: string }).id;
}

const cpuMs = (cpu: CpuSample, names: readonly string[], runs: number) =>
  runs ? (1000 * names.reduce((s, n) => s + (cpu[n] ?? 0), 0)) / runs : Number.NaN;

/** `concurrency` clients each issuing the next run when the previous answers. */
async function concurrent(
  step: Step,
  total: number,
  concurrency: number,
  maxSeconds: number,
  sampler: CpuSampler,
  names: readonly string[],
): Promise<Omit<Row, 'system' | 'phase'>> {
  const latencies: number[] = [];
  const failureSamples: string[] = [];
  let failures = 0;
  let next = 0;
  const before = sampler.sample();
  const started = process.hrtime.bigint();
  const client = async () => {
    while (next < total && msSince(started) / 1000 < maxSeconds) {
      const outcome = await step.once(next++);
      latencies.push(outcome.ms);
      if (outcome.error !== null && failures++ < 5) failureSamples.push(outcome.error);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, client));
  const wall = msSince(started) / 1000;
  const cpu: CpuSample = {};
  accumulate(cpu, before, sampler.sample());
  const s = summarize(latencies);
  return {
    runs: latencies.length,
    failures,
    p50: s.p50,
    p99: s.p99,
    runsPerSecond: latencies.length / wall,
    cpuMsPerRun: cpuMs(cpu, names, latencies.length),
    failureSamples,
  };
}

async function measureTopology(topology: Topology, pyspurUrl: string, pyspurPid: number, tmp: string): Promise<Row[]> {
  const stack = await startStack({ tmpDir: path.join(tmp, topology), topology });
  const spur = jsonClient(stack.apiUrl);
  const pyspur = jsonClient(pyspurUrl);
  try {
    const spurStep = blockingStep('spur', spur, await createWorkflow(spur));
    const pyStep = blockingStep('pyspur', pyspur, await createWorkflow(pyspur));
    const sampler = new CpuSampler({ ...stack.groups, pyspur: pyspurPid });
    log(`${topology}: warm-up (${settings.warmup} runs each)`);
    await runInterleaved([spurStep, pyStep], settings.warmup, 60, sampler);
    sampler.refresh();
    log(`${topology}: ${settings.runs} sequential rounds, interleaved`);
    // Alternate who goes first, so neither always runs right after the other's burst of work.
    const seq = await runInterleaved([spurStep, pyStep], settings.runs, settings.seqSeconds, sampler);
    const [spurSeq, pySeq] = seq.results;
    const rows: Row[] = [];
    for (const [system, r, names] of [
      ['Spur', spurSeq, SPUR_PROCESSES],
      ['PySpur', pySeq, ['pyspur']],
    ] as const) {
      if (!r) continue;
      const s = summarize(r.latenciesMs);
      rows.push({
        system,
        phase: 'seq',
        runs: s.count,
        failures: r.failures,
        p50: s.p50,
        p99: s.p99,
        runsPerSecond: s.count / r.wallSeconds,
        cpuMsPerRun: cpuMs(r.cpu, names, s.count),
        failureSamples: r.failureSamples,
      });
    }
    sampler.refresh();
    log(`${topology}: concurrency ${settings.concurrency}, Spur then PySpur`);
    rows.push({
      system: 'Spur',
      phase: `c=${settings.concurrency}`,
      ...(await concurrent(
        spurStep,
        settings.loadRuns,
        settings.concurrency,
        settings.loadSeconds,
        sampler,
        SPUR_PROCESSES,
      )),
    });
    // Before the c=20 attempt, which may leave PySpur's connection pool waiting for a while.
    log(`${topology}: PySpur at concurrency ${settings.pyspurConcurrency}`);
    rows.push({
      system: 'PySpur',
      phase: `c=${settings.pyspurConcurrency}`,
      ...(await concurrent(pyStep, settings.loadRuns, settings.pyspurConcurrency, settings.loadSeconds, sampler, [
        'pyspur',
      ])),
    });
    rows.push({
      system: 'PySpur',
      phase: `c=${settings.concurrency}`,
      ...(await concurrent(pyStep, settings.loadRuns, settings.concurrency, settings.loadSeconds, sampler, ['pyspur'])),
    });
    return rows;
  } finally {
    spur.close();
    pyspur.close();
    await stack.stop();
  }
}

const f = (n: number, d = 1) => (Number.isFinite(n) ? n.toFixed(d) : '–');

function report(byTopology: Record<string, Row[]>, seconds: number): string {
  const lines = [
    `# Spur vs PySpur ${PYSPUR_VERSION} — ${new Date().toISOString()}`,
    '',
    `Machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? '?'}, Node ${process.version}; load average at end ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}` + ' (the machine may have been shared: the interleaving gives both systems the same noise).',
    `Workflow: ${VS_WORKFLOW.name} (bench/lib/vs-scenario.ts), blocking POST /api/wf/{id}/run/, keep-alive client. PySpur: \`pyspur serve --sqlite\`, telemetry off, a fresh one per topology. npm run dev's topology: ${DEV_TOPOLOGY}.`,
    `Settings: \`${JSON.stringify(settings)}\`; took ${seconds.toFixed(0)} s.`,
    '',
    '| topology | system | phase | runs | fail | p50 ms | p99 ms | runs/s | CPU-ms/run |',
    '| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  const ratios: string[] = [];
  for (const [topology, rows] of Object.entries(byTopology)) {
    for (const r of rows)
      lines.push(
        `| ${topology} | ${r.system} | ${r.phase} | ${r.runs} | ${r.failures} | ${f(r.p50)} | ${f(r.p99)} | ${f(r.runsPerSecond)} | ${f(r.cpuMsPerRun)} |`,
      );
    const get = (system: string, phase: string) => rows.find((r) => r.system === system && r.phase === phase);
    const [s, p, sl, pl] = [
      get('Spur', 'seq'),
      get('PySpur', 'seq'),
      get('Spur', `c=${settings.concurrency}`),
      get('PySpur', `c=${settings.concurrency}`),
    ];
    if (!s || !p || !sl || !pl) continue;
    const mark = (ok: boolean) => (ok ? 'met' : 'MISSED');
    const judged = topology === DEV_TOPOLOGY ? ' (npm run dev: targets apply)' : '';
    // PySpur's best rate with nothing failed: at c=20 if it manages, else at the concurrency it sustains, or one at a time.
    const best = rows
      .filter((r) => r.system === 'PySpur' && r.failures === 0)
      .sort((a, b) => b.runsPerSecond - a.runsPerSecond)[0];
    const throughput = best
      ? `throughput at c=${settings.concurrency} ${f(sl.runsPerSecond)} runs/s, ${sl.failures} failed, ×${f(sl.runsPerSecond / best.runsPerSecond, 2)} of PySpur's best with 0 failed (${f(best.runsPerSecond)} runs/s at ${best.phase}` +
        `${pl.failures > 0 ? `; at c=${settings.concurrency} PySpur failed ${pl.failures} of ${pl.runs}` : ''}) (≥ 2.5, 0 failed: ${mark(sl.runsPerSecond / best.runsPerSecond >= 2.5 && sl.failures === 0)}), `
      : `throughput: no ratio, PySpur failed in every phase; `;
    ratios.push(
      `- ${topology}${judged}: p50 ×${f(s.p50 / p.p50, 2)} of PySpur's (target ≤ 0.8: ${mark(s.p50 / p.p50 <= 0.8)}), p99 ×${f(s.p99 / p.p99, 2)} (≤ 1.0: ${mark(s.p99 / p.p99 <= 1)}), ${throughput}Spur CPU ${f(s.cpuMsPerRun)} ms per run (≤ 20: ${mark(s.cpuMsPerRun <= 20)})`,
    );
    for (const r of rows)
      for (const sample of r.failureSamples) ratios.push(`  - ${topology} ${r.system} ${r.phase} failure: ${sample}`);
  }
  return [...lines, '', ...ratios, ''].join('\n');
}

async function main(): Promise<void> {
  const started = Date.now();
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'spur-vs-pyspur-'));
  try {
    const byTopology: Record<string, Row[]> = {};
    // A fresh PySpur per topology, as Spur gets a fresh stack: PySpur slows as its SQLite file grows.
    for (const topology of settings.topologies) {
      const pyspur = await startPySpur(path.join(tmp, `pyspur-${topology}`), log);
      try {
        byTopology[topology] = await measureTopology(topology, pyspur.baseUrl, pyspur.pid, tmp);
      } finally {
        await pyspur.stop();
      }
    }
    const text = report(byTopology, (Date.now() - started) / 1000);
    console.log(`\n${text}`);
    const dir = path.join(REPO_ROOT, 'bench', 'results');
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      path.join(dir, `vs-pyspur-${new Date().toISOString().replace(/[:.]/g, '-')}.json`),
      `${JSON.stringify({ settings, byTopology }, null, 2)}\n`,
    );
    writeFileSync(path.join(dir, 'vs-pyspur-latest.md'), text);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});

// Batch benchmark (durable batch runs): a 10 000-row dataset through a 1-node and a 3-node
// pure workflow as batch runs, on the bench's own stack (api and worker processes, Temporal dev
// server, FerretDB). Reports rows/s (median of BENCH_BATCH_REPEATS batches), the peak RSS of the
// api and the worker, and the largest history of any of the batch's workflow runs (it continues as
// new). Baseline in the same run: the same 1-node workflow run row by row as blocking runs (what a
// client without batch runs would do), rows/s. Memory flatness: peak worker RSS after a
// BENCH_BATCH_SMALL-row batch on a fresh stack vs after the big ones.
// Usage: npx tsx bench/batch.ts (knobs: BENCH_BATCH_ROWS 10000, BENCH_BATCH_SMALL 1000,
// BENCH_BATCH_REPEATS 3, BENCH_BATCH_MINI 100, BENCH_BATCH_BASELINE_ROWS 200, BENCH_BATCH_CHILD_ROWS 500).
// The alternative design, a child workflow per row (SPUR_BATCH_ROW_MODE=child), is measured on a
// second stack over BENCH_BATCH_CHILD_ROWS rows.
// CPU-seconds per process over each 1-node batch (median) and the machine's load average are
// reported beside rows/s: the machine is shared, and CPU per row does not move with its load.
import { readFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { REPO_ROOT } from '../scripts/lib/tools';
import { type Api, api, runBatch as runBatchOf, uploadDataset } from './lib/batch-client';
import { CpuSampler, PROCESS_NAMES, accumulate, type CpuSample } from './lib/cpu';
import { withTemporalClient } from './lib/history';
import { type Stack, startStack } from './lib/stack';
import { median } from './lib/stats';

const num = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const settings = {
  rows: num('BENCH_BATCH_ROWS', 10_000),
  small: num('BENCH_BATCH_SMALL', 1000),
  repeats: num('BENCH_BATCH_REPEATS', 3),
  mini: num('BENCH_BATCH_MINI', 100),
  baselineRows: num('BENCH_BATCH_BASELINE_ROWS', 200),
  childRows: num('BENCH_BATCH_CHILD_ROWS', 500),
};

const input = { id: 'in', node_type: 'InputNode', config: { output_schema: { x: 'string', k: 'string' } } };
const GRAPHS = {
  '1 node': { nodes: [input], links: [] },
  '3 nodes': {
    nodes: [
      input,
      { id: 'mid', node_type: 'OutputNode', config: { output_map: { x: 'in.x', k: 'in.k' } } },
      { id: 'out', node_type: 'OutputNode', config: { output_map: { answer: 'mid.x' } } },
    ],
    links: [
      { source_id: 'in', target_id: 'mid' },
      { source_id: 'mid', target_id: 'out' },
    ],
  },
} as const;

/** The throughput target for the 1-node inline batch (docs/performance.md). */
const TARGET_ROWS_PER_SECOND = 5000;

const loadAverage = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

/** Peak resident memory of a process so far (VmHWM), MiB. */
function peakRssMiB(pid: number): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : Number.NaN;
}

const runBatch = (http: Api, workflowId: string, datasetId: string) =>
  runBatchOf(http, workflowId, datasetId, settings.mini);

/** Largest history (events) among the batch workflow's runs (one per continue-as-new). */
async function largestHistory(stack: Stack, runId: string): Promise<{ events: number; runs: number }> {
  return withTemporalClient(stack.env.SPUR_TEMPORAL_ADDRESS as string, async (client) => {
    let events = 0;
    let runs = 0;
    for await (const wf of client.workflow.list({ query: `WorkflowId = 'run-${runId}'` })) {
      events = Math.max(events, wf.historyLength);
      runs++;
    }
    return { events, runs };
  });
}

async function main(): Promise<void> {
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'spur-bench-batch-'));
  const lines: string[] = [];
  let stack: Stack | undefined;
  try {
    stack = await startStack({ tmpDir: tmp });
    const http = api(stack.apiUrl);
    const workflows: Record<string, string> = {};
    for (const [name, definition] of Object.entries(GRAPHS)) {
      workflows[name] = (await http.post('/wf/', { name: `batch bench ${name}`, definition })).body.id;
    }
    // Memory baseline: a small batch first, on the fresh stack.
    const smallId = await uploadDataset(http, 'small', settings.small);
    await runBatch(http, workflows['1 node'] as string, smallId);
    const afterSmall = {
      api: peakRssMiB(stack.groups.api),
      worker: peakRssMiB(stack.groups.worker ?? stack.groups.api),
    };

    const bigId = await uploadDataset(http, 'big', settings.rows);
    const results: Record<
      string,
      { rowsPerSecond: number[]; history: { events: number; runs: number }; cpu: CpuSample[] }
    > = {};
    const sampler = new CpuSampler(stack.groups);
    const loadBefore = loadAverage();
    for (let i = 0; i < settings.repeats; i++) {
      for (const name of Object.keys(GRAPHS)) {
        const cpu: CpuSample = {};
        const before = sampler.sample();
        const { runId, seconds } = await runBatch(http, workflows[name] as string, bigId);
        accumulate(cpu, before, sampler.sample());
        const entry = (results[name] ??= { rowsPerSecond: [], history: { events: 0, runs: 0 }, cpu: [] });
        entry.rowsPerSecond.push(settings.rows / seconds);
        entry.cpu.push(cpu);
        const history = await largestHistory(stack, runId);
        if (history.events > entry.history.events) entry.history = history;
        console.log(
          `${name}: ${settings.rows} rows in ${seconds.toFixed(2)} s (${history.runs} workflow runs, largest history ${history.events} events)`,
        );
      }
    }
    const loadAfter = loadAverage();
    const afterBig = { api: peakRssMiB(stack.groups.api), worker: peakRssMiB(stack.groups.worker ?? stack.groups.api) };

    // Baseline: the same rows one blocking run each, sequentially.
    const t0 = performance.now();
    for (let i = 0; i < settings.baselineRows; i++) {
      const res = await http.post(`/wf/${workflows['1 node']}/run/`, {
        initial_inputs: { in: { x: `value ${i}`, k: String(i % 3) } },
      });
      if (res.status !== 200) throw new Error(`baseline run: ${res.status}`);
    }
    const baseline = settings.baselineRows / ((performance.now() - t0) / 1000);
    await stack.stop();

    // The alternative: every row its own spurRun child workflow.
    mkdirSync(path.join(tmp, 'child'));
    stack = await startStack({ tmpDir: path.join(tmp, 'child'), extraEnv: { SPUR_BATCH_ROW_MODE: 'child' } });
    const childHttp = api(stack.apiUrl);
    const childWf = (await childHttp.post('/wf/', { name: 'batch bench child mode', definition: GRAPHS['1 node'] }))
      .body.id;
    const childDs = await uploadDataset(childHttp, 'child', settings.childRows);
    const child = await runBatch(childHttp, childWf, childDs);
    const childRate = settings.childRows / child.seconds;
    const childHistory = await largestHistory(stack, child.runId);
    console.log(
      `1 node, child mode: ${settings.childRows} rows in ${child.seconds.toFixed(2)} s (${childHistory.runs} workflow runs, largest history ${childHistory.events} events)`,
    );

    lines.push(
      `# Batch benchmark — ${new Date().toISOString()}`,
      '',
      `${settings.rows} rows, mini_batch_size ${settings.mini}, ${settings.repeats} batches per graph (median), inline mode (rows in chunk activities, one run record each).`,
      '',
      '| graph | rows/s (median) | × baseline | largest history (events) | workflow runs per batch |',
      '|---|---:|---:|---:|---:|',
      ...Object.entries(results).map(
        ([name, r]) =>
          `| ${name} | ${median(r.rowsPerSecond).toFixed(0)} | ${(median(r.rowsPerSecond) / baseline).toFixed(1)} | ${r.history.events} | ${r.history.runs} |`,
      ),
      `| 1 node, child workflow per row (${settings.childRows} rows) | ${childRate.toFixed(0)} | ${(childRate / baseline).toFixed(1)} | ${childHistory.events} | ${childHistory.runs} |`,
      `| baseline: one blocking run per row (1 node, ${settings.baselineRows} rows) | ${baseline.toFixed(1)} | 1.0 | | |`,
      '',
      `Peak RSS (VmHWM) after a ${settings.small}-row batch: api ${afterSmall.api.toFixed(0)} MiB, worker ${afterSmall.worker.toFixed(0)} MiB;` +
        ` after ${settings.repeats * 2} batches of ${settings.rows} rows: api ${afterBig.api.toFixed(0)} MiB, worker ${afterBig.worker.toFixed(0)} MiB.`,
      '',
      `CPU-seconds per ${settings.rows}-row batch (median), by process:`,
      '',
      `| graph | ${PROCESS_NAMES.join(' | ')} | machine (all processes) |`,
      `|---|${PROCESS_NAMES.map(() => '---:').join('|')}|---:|`,
      ...Object.entries(results).map(
        ([name, r]) =>
          `| ${name} | ${[...PROCESS_NAMES, 'machine'].map((p) => median(r.cpu.map((c) => c[p] ?? 0)).toFixed(2)).join(' | ')} |`,
      ),
      '',
      `Load average (1, 5, 15 min) before the big batches: ${loadBefore}; after: ${loadAfter} (${os.cpus().length} cores, shared).`,
      `Target ≥ ${TARGET_ROWS_PER_SECOND} rows/s for 1 node: ${median(results['1 node']?.rowsPerSecond ?? []) >= TARGET_ROWS_PER_SECOND ? 'met' : 'MISSED'}.`,
    );
    console.log(lines.join('\n'));
    const out = path.join(REPO_ROOT, 'bench', 'results');
    mkdirSync(out, { recursive: true });
    writeFileSync(path.join(out, 'batch-latest.md'), `${lines.join('\n')}\n`);
  } finally {
    await stack?.stop();
    rmSync(tmp, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});

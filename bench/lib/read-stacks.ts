// What the read benchmarks share (bench/run-reads.ts, bench/pause-reads.ts): this build's stack, and
// with BENCH_BASELINE=<commit> that commit's api beside it on the same servers (a database of its
// own); on each, some runs of one workflow brought to a status; reads timed one after another.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MongoClient } from 'mongodb';
import { type BaselineTree, checkOutBaseline } from './baseline-tree';
import { jsonClient, type JsonClient } from './http';
import { startStack } from './stack';
import { summarize } from './stats';

/** One build's api, its database, and the runs a benchmark reads. */
export interface ReadTarget {
  name: string;
  http: JsonClient;
  db: string;
  runIds: string[];
}

export interface ReadSetup {
  /** Workflow definition the runs are of. */
  definition: unknown;
  runs: number;
  /** The status each run is read in (reached before reading starts). */
  until: string;
}

async function prepare(name: string, apiUrl: string, db: string, setup: ReadSetup): Promise<ReadTarget> {
  const http = jsonClient(apiUrl);
  const wf = await http.post('/wf/', { name: 'reads', definition: setup.definition });
  if (wf.status !== 200) throw new Error(`create: ${wf.status}`);
  const id = (wf.body as { id: string }).id;
  const runIds: string[] = [];
  for (let i = 0; i < setup.runs; i++) {
    const started = await http.post(`/wf/${id}/start_run/`, { initial_inputs: { in: { x: `r${i}` } } });
    runIds.push((started.body as { id: string }).id);
  }
  for (const runId of runIds)
    for (let tries = 0; ; tries++) {
      const { status } = (await http.get(`/run/${runId}/status/`)).body as { status: string };
      if (status === setup.until) break;
      if (tries > 300) throw new Error(`${name}: run ${runId} still ${status}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  return { name, http, db, runIds };
}

/** The median of `reads` GETs of `pathOf(i)`, one after another; any answer but 200 fails the benchmark. */
export async function medianRead(t: ReadTarget, reads: number, pathOf: (i: number) => string): Promise<number> {
  const ms: number[] = [];
  for (let i = 0; i < reads; i++) {
    const t0 = performance.now();
    const res = await t.http.get(pathOf(i));
    if (res.status !== 200) throw new Error(`${t.name}: ${pathOf(i)} ${res.status}`);
    ms.push(performance.now() - t0);
  }
  return summarize(ms).p50;
}

/**
 * Starts the stack (and the baseline's api with BENCH_BASELINE), prepares the runs on each, and hands
 * the targets (this build first) and a MongoDB client to `measure`; stops everything after.
 */
export async function withReadTargets(
  setup: ReadSetup,
  measure: (targets: ReadTarget[], mongo: MongoClient) => Promise<void>,
): Promise<void> {
  const baseline: BaselineTree | undefined = process.env.BENCH_BASELINE
    ? checkOutBaseline(process.env.BENCH_BASELINE)
    : undefined;
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'spur-bench-reads-'));
  const stack = await startStack({ tmpDir: tmp, ...(baseline ? { baseline: { root: baseline.root } } : {}) });
  const mongo = await MongoClient.connect(stack.env.SPUR_MONGODB_URI ?? '');
  try {
    const targets = [await prepare('this build', stack.apiUrl, stack.env.SPUR_MONGODB_DB ?? '', setup)];
    if (stack.baseline && baseline)
      targets.push(
        await prepare(
          `baseline ${baseline.commit}`,
          stack.baseline.apiUrl,
          stack.baseline.env.SPUR_MONGODB_DB ?? '',
          setup,
        ),
      );
    await measure(targets, mongo);
  } finally {
    await mongo.close();
    await stack.stop();
    rmSync(tmp, { recursive: true, force: true });
    baseline?.remove();
  }
}

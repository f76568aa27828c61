// What reading one run costs as other runs' records pile up: the median of GET /run/{id}/ (the record
// with its tasks and failed attempts, what PySpur's UI polls) with 0, 5 000 and 20 000 failed attempts
// of other runs stored. With BENCH_BASELINE=<commit> the same reads go to that commit's api too, on
// the same servers (a database of its own), for a before/after in one run.
// Usage: npx tsx bench/run-reads.ts; writes bench/results/run-reads-latest.md.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MongoClient } from 'mongodb';
import { type BaselineTree, checkOutBaseline } from './lib/baseline-tree';
import { jsonClient, type JsonClient } from './lib/http';
import { saveResults } from './lib/report';
import { startStack } from './lib/stack';
import { summarize } from './lib/stats';

const LEVELS = [0, 5_000, 20_000];
const RUNS = 20;
const READS = 100;

const definition = {
  nodes: [
    { id: 'in', node_type: 'InputNode', config: { output_schema: { x: 'string' } } },
    { id: 'out', node_type: 'OutputNode', config: { output_map: { x: 'in.x' } } },
  ],
  links: [{ source_id: 'in', target_id: 'out' }],
};

interface Target {
  name: string;
  http: JsonClient;
  db: string;
  runIds: string[];
}

async function prepare(name: string, apiUrl: string, db: string): Promise<Target> {
  const http = jsonClient(apiUrl);
  const wf = await http.post('/wf/', { name: 'reads', definition });
  if (wf.status !== 200) throw new Error(`create: ${wf.status}`);
  const id = (wf.body as { id: string }).id;
  const runIds: string[] = [];
  for (let i = 0; i < RUNS; i++) {
    const started = await http.post(`/wf/${id}/start_run/`, { initial_inputs: { in: { x: `r${i}` } } });
    runIds.push((started.body as { id: string }).id);
  }
  for (const runId of runIds)
    for (let tries = 0; ; tries++) {
      const { status } = (await http.get(`/run/${runId}/status/`)).body as { status: string };
      if (status === 'COMPLETED') break;
      if (tries > 300) throw new Error(`${name}: run ${runId} still ${status}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  return { name, http, db, runIds };
}

/** Failed attempts of runs that are not the ones read, as an installation's history leaves them. */
async function storeAttempts(mongo: MongoClient, db: string, upTo: number): Promise<void> {
  const attempts = mongo.db(db).collection<{ _id: string }>('node_attempts');
  const have = await attempts.countDocuments();
  for (let from = have; from < upTo; from += 1000) {
    const docs = Array.from({ length: Math.min(1000, upTo - from) }, (_, i) => ({
      _id: `OLD${from + i}/node/1`,
      run_id: `OLD${from + i}`,
      node_id: 'node',
      attempt: 1,
      start_time: null,
      end_time: new Date().toISOString(),
      error: 'HTTP 503: the service was busy',
      workspace_id: 'default',
    }));
    await attempts.insertMany(docs);
  }
}

async function medianRead(t: Target): Promise<number> {
  const ms: number[] = [];
  for (let i = 0; i < READS; i++) {
    const t0 = performance.now();
    const res = await t.http.get(`/run/${t.runIds[i % t.runIds.length]}/`);
    if (res.status !== 200) throw new Error(`${t.name}: read ${res.status}`);
    ms.push(performance.now() - t0);
  }
  return summarize(ms).p50;
}

async function main(): Promise<void> {
  const baseline: BaselineTree | undefined = process.env.BENCH_BASELINE
    ? checkOutBaseline(process.env.BENCH_BASELINE)
    : undefined;
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'spur-bench-reads-'));
  const stack = await startStack({ tmpDir: tmp, ...(baseline ? { baseline: { root: baseline.root } } : {}) });
  const mongo = await MongoClient.connect(stack.env.SPUR_MONGODB_URI ?? '');
  try {
    const targets = [await prepare('this build', stack.apiUrl, stack.env.SPUR_MONGODB_DB ?? '')];
    if (stack.baseline && baseline)
      targets.push(
        await prepare(`baseline ${baseline.commit}`, stack.baseline.apiUrl, stack.baseline.env.SPUR_MONGODB_DB ?? ''),
      );
    const rows: string[] = [];
    const medians = new Map<string, number[]>();
    for (const level of LEVELS)
      for (const t of targets) {
        await storeAttempts(mongo, t.db, level);
        await medianRead(t); // warm
        const p50 = await medianRead(t);
        medians.set(t.name, [...(medians.get(t.name) ?? []), p50]);
        rows.push(`| ${t.name} | ${level} | ${p50.toFixed(1)} |`);
      }
    const growth = [...medians].map(
      ([name, [first, , last]]) =>
        `- ${name}: ×${((last ?? Number.NaN) / (first ?? Number.NaN)).toFixed(2)} from 0 to ${LEVELS.at(-1)} attempts stored`,
    );
    saveResults('run-reads-latest.md', [
      `# Reading a run as other runs' records pile up — ${new Date().toISOString()}`,
      '',
      `GET /run/{id}/ of ${RUNS} completed one-node runs, ${READS} reads one after another per row (median), with other runs' failed attempts stored in \`node_attempts\`; default topology, dev servers (FerretDB on SQLite).`,
      '',
      '| build | failed attempts of other runs | p50 ms |',
      '| --- | ---: | ---: |',
      ...rows,
      '',
      ...growth,
    ]);
  } finally {
    await mongo.close();
    await stack.stop();
    rmSync(tmp, { recursive: true, force: true });
    baseline?.remove();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});

// Where one blocking run's cost goes, in measures a loaded machine does not distort: CPU-ms per
// run for each process (api, worker, Temporal, FerretDB; from /proc), MongoDB round trips per run
// by command (a counting proxy between the api/worker and FerretDB), and the Temporal history of a
// run (workflow tasks, markers of local activities, events). Wall-clock p50 is printed too, for
// what it is worth under load. Writes bench/results/profile-<topology>-latest.md.
//
// Usage: npx tsx bench/run-profile.ts [runs=200]; BENCH_TOPOLOGY=split|combined (split);
// BENCH_CPU_PROF_DIR=<dir> adds V8 CPU profiles of the api and the worker; BENCH_EXTRA_ENV (a JSON
// object) adds to their environment (a knob under test).
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { runWorkflowId } from '../temporal/shared/workflow-names';
import { CpuSampler, accumulate, threadSeconds, type CpuSample } from './lib/cpu';
import { jsonClient } from './lib/http';
import { startMongoCounter, type MongoCounter } from './lib/mongo-counter';
import { saveResults } from './lib/report';
import { startStack, topologyEnv, type Stack } from './lib/stack';
import { msSince, summarize } from './lib/stats';
import { VS_WORKFLOW, vsAnswerOk, vsRunBody } from './lib/vs-scenario';

const RUNS = Number(process.argv[2] ?? 200);
const WARMUP = 30;
const f = (n: number, d = 1) => (Number.isFinite(n) ? n.toFixed(d) : '–');

async function historyTally(stack: Stack, runId: string): Promise<Record<string, number>> {
  const connection = await Connection.connect({ address: stack.env.SPUR_TEMPORAL_ADDRESS ?? '' });
  try {
    const client = new Client({ connection });
    const history = await client.workflow.getHandle(runWorkflowId(runId, '')).fetchHistory();
    const tally: Record<string, number> = {};
    for (const e of history.events ?? []) {
      const name = (temporal.api.enums.v1.EventType[e.eventType ?? 0] ?? '?').replace(/^EVENT_TYPE_/, '');
      tally[name] = (tally[name] ?? 0) + 1;
    }
    tally.TOTAL = history.events?.length ?? 0;
    return tally;
  } finally {
    await connection.close();
  }
}

async function main(): Promise<void> {
  const topology = topologyEnv();
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'spur-profile-'));
  let counter: MongoCounter | undefined;
  const stack = await startStack({
    tmpDir: tmp,
    topology,
    ...(process.env.BENCH_EXTRA_ENV ? { extraEnv: JSON.parse(process.env.BENCH_EXTRA_ENV) as Record<string, string> } : {}),
    mongoUri: async (uri) => {
      const { hostname, port } = new URL(uri);
      counter = await startMongoCounter({ host: hostname, port: Number(port) });
      return counter.uri;
    },
  });
  const http = jsonClient(stack.apiUrl);
  try {
    const wf = (await http.post('/wf/', VS_WORKFLOW)).body as { id: string };
    const once = async (i: number) => {
      const text = `p-${i}`;
      const t0 = process.hrtime.bigint();
      const res = await http.post(`/wf/${wf.id}/run/`, vsRunBody(text));
      if (res.status !== 200 || !vsAnswerOk(res.body, text)) throw new Error(`run ${i}: HTTP ${res.status} ${JSON.stringify(res.body)}`);
      return msSince(t0);
    };
    for (let i = 0; i < WARMUP; i++) await once(i);
    const sampler = new CpuSampler(stack.groups);
    counter?.reset();
    const before = sampler.sample();
    const threadsBefore = threadSeconds(stack.groups.api);
    const latencies: number[] = [];
    for (let i = 0; i < RUNS; i++) latencies.push(await once(WARMUP + i));
    const cpu: CpuSample = {};
    accumulate(cpu, before, sampler.sample());
    const threads = [...threadSeconds(stack.groups.api)].map(([k, v]) => [k, v - (threadsBefore.get(k) ?? 0)] as const).filter(([, v]) => v > 0).sort((a, b) => b[1] - a[1]).slice(0, 6);
    const mongo = counter?.counts() ?? {};
    const runs = (await http.get(`/wf/${wf.id}/runs/?page_size=1`)).body as { id: string }[];
    const history = runs[0] ? await historyTally(stack, runs[0].id) : {};

    const perRun = (s: number) => f((1000 * s) / RUNS);
    const names = Object.keys(stack.groups);
    const total = names.reduce((s, n) => s + (cpu[n] ?? 0), 0);
    const mongoTotal = Object.values(mongo).reduce((s, n) => s + n, 0);
    const lat = summarize(latencies);
    const lines = [
      `# Run profile (${topology}) — ${new Date().toISOString()}`,
      '',
      `${RUNS} sequential blocking runs of "${VS_WORKFLOW.name}" after ${WARMUP} warm-up runs; load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}.`,
      '',
      `- CPU-ms per run: ${names.map((n) => `${n} ${perRun(cpu[n] ?? 0)}`).join(', ')}; **total ${perRun(total)}**`,
      `- the api process's busiest threads, CPU-ms per run (the first is its main thread, the second the workflow thread when it hosts the worker): ${threads.map(([k, v]) => `${k} ${perRun(v)}`).join(', ')}`,
      `- MongoDB round trips per run: **${f(mongoTotal / RUNS, 2)}** (${Object.entries(mongo).sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ${f(v / RUNS, 2)}`).join(', ')})`,
      `- Temporal history of one run: ${Object.entries(history).map(([k, v]) => `${k} ${v}`).join(', ')}`,
      `- wall clock (loaded machine): p50 ${f(lat.p50)} ms, p99 ${f(lat.p99)} ms`,
    ];
    saveResults(`profile-${topology}-latest.md`, lines);
  } finally {
    http.close();
    await stack.stop();
    await counter?.close();
    rmSync(tmp, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});

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
import type { Client } from '@temporalio/client';
import { runWorkflowId } from '../src/contracts/workflow-names';
import { CpuSampler, accumulate, threadSeconds, type CpuSample } from './lib/cpu';
import { eventMs, eventName, tallyEvents, withTemporalClient } from './lib/history';
import { jsonClient } from './lib/http';
import { startMongoCounter, type MongoCounter } from './lib/mongo-counter';
import { type RunWindow, timeline } from './lib/run-timeline';
import { saveResults } from './lib/report';
import { startStack, topologyEnv } from './lib/stack';
import { msSince, summarize } from './lib/stats';
import { VS_INPUT_NODE_ID, VS_WORKFLOW, vsAnswerOk, vsRunBody } from './lib/vs-scenario';

const RUNS = Number(process.argv[2] ?? 200);
const WARMUP = 30;
/** Runs whose timeline is taken (after the measured ones: reading histories costs CPU). */
const TIMELINE_RUNS = 60;
const f = (n: number, d = 1) => (Number.isFinite(n) ? n.toFixed(d) : '–');

async function historyTally(client: Client, runId: string): Promise<Record<string, number>> {
  const events = (await client.workflow.getHandle(runWorkflowId(runId, '')).fetchHistory()).events ?? [];
  return { ...tallyEvents(events), TOTAL: events.length };
}

type RunBody = { id: string; tasks: Array<{ node_id: string; start_time: string | null; end_time: string | null }> };

/** The windows of the runs just made (newest first from the api), their workflows' start times added. */
async function runWindows(
  client: Client,
  runs: RunBody[],
  sent: Array<{ sent: number; answered: number }>,
  inputNodeId: string,
): Promise<RunWindow[]> {
  const ordered = [...runs].reverse();
  return Promise.all(
    ordered.map(async (run, i) => {
      const history = await client.workflow.getHandle(runWorkflowId(run.id, '')).fetchHistory();
      const started = history.events?.find((e) => eventName(e) === 'WORKFLOW_EXECUTION_STARTED');
      const tasks = run.tasks
        .filter((t) => t.node_id !== inputNodeId && t.start_time && t.end_time)
        .map((t) => ({
          start: Date.parse(`${t.start_time}Z`.replace(/Z+$/, 'Z')),
          end: Date.parse(`${t.end_time}Z`.replace(/Z+$/, 'Z')),
        }));
      return {
        ...(sent[i] as { sent: number; answered: number }),
        workflowStarted: started ? eventMs(started) : Number.NaN,
        tasks,
      };
    }),
  );
}

async function main(): Promise<void> {
  const topology = topologyEnv();
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'spur-profile-'));
  let counter: MongoCounter | undefined;
  const stack = await startStack({
    tmpDir: tmp,
    topology,
    ...(process.env.BENCH_EXTRA_ENV
      ? { extraEnv: JSON.parse(process.env.BENCH_EXTRA_ENV) as Record<string, string> }
      : {}),
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
      if (res.status !== 200 || !vsAnswerOk(res.body, text))
        throw new Error(`run ${i}: HTTP ${res.status} ${JSON.stringify(res.body)}`);
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
    const threads = [...threadSeconds(stack.groups.api)]
      .map(([k, v]) => [k, v - (threadsBefore.get(k) ?? 0)] as const)
      .filter(([, v]) => v > 0)
      .sort((a, b) => b[1] - a[1])
      .slice(0, 6);
    const mongo = counter?.counts() ?? {};

    // The timeline: more runs, one at a time, with every round trip's times kept.
    const windows: Array<{ sent: number; answered: number }> = [];
    counter?.record(true);
    for (let i = 0; i < TIMELINE_RUNS; i++) {
      const sent = performance.timeOrigin + performance.now();
      await once(WARMUP + RUNS + i);
      windows.push({ sent, answered: performance.timeOrigin + performance.now() });
    }
    counter?.record(false);
    const recent = (await http.get(`/wf/${wf.id}/runs/?page_size=${TIMELINE_RUNS}`)).body as RunBody[];
    const { history, spans } = await withTemporalClient(stack.env.SPUR_TEMPORAL_ADDRESS ?? '', async (client) => ({
      history: recent[0] ? await historyTally(client, recent[0].id) : {},
      spans: timeline(await runWindows(client, recent, windows, VS_INPUT_NODE_ID), counter?.timeline() ?? []),
    }));

    const perRun = (s: number) => f((1000 * s) / RUNS);
    const names = Object.keys(stack.groups);
    const total = names.reduce((s, n) => s + (cpu[n] ?? 0), 0);
    const mongoTotal = Object.values(mongo).reduce((s, n) => s + n, 0);
    const lat = summarize(latencies);
    const lines = [
      `# Run profile (${topology}) — ${new Date().toISOString()}`,
      '',
      `${RUNS} sequential blocking runs of "${VS_WORKFLOW.name}" after ${WARMUP} warm-up runs; load average ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}.`,
      '',
      `- CPU-ms per run: ${names.map((n) => `${n} ${perRun(cpu[n] ?? 0)}`).join(', ')}; **total ${perRun(total)}**`,
      `- the api process's busiest threads, CPU-ms per run (the first is its main thread, the second the workflow thread when it hosts the worker): ${threads.map(([k, v]) => `${k} ${perRun(v)}`).join(', ')}`,
      `- MongoDB round trips per run: **${f(mongoTotal / RUNS, 2)}** (${Object.entries(mongo)
        .sort((a, b) => b[1] - a[1])
        .map(([k, v]) => `${k} ${f(v / RUNS, 2)}`)
        .join(', ')})`,
      `- Temporal history of one run: ${Object.entries(history)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')}`,
      `- wall clock (loaded machine): p50 ${f(lat.p50)} ms, p99 ${f(lat.p99)} ms`,
      '',
      `Where one run's milliseconds go: medians over ${spans.runs} more runs, from the client's clock, each MongoDB round trip's (the proxy's: its hop adds ~0.1 ms to each), the Temporal history's event times and the task records (bench/lib/run-timeline.ts). The save is ${f(spans.saveTrips, 0)} round trips.`,
      '',
      '| stage | ms (median) |',
      '| --- | ---: |',
      ...spans.stages.map(([name, ms]) => `| ${name} | ${f(ms)} |`),
      `| **total (client)** | **${f(spans.total)}** |`,
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

// Run event streams: BENCH_EVENT_STREAMS (1000) concurrent `GET /run/{id}/events/`
// streams on one api, spread over BENCH_EVENT_RUNS (50) paused runs; then every run is approved and
// runs to its end. Measures the api's RSS and CPU (idle with the streams open, and while the events
// flow) and each event's delay from its write (the event document's `at`, stamped right after the
// projection write) to a client receiving it. Usage: npx tsx bench/run-events.ts
import { readFileSync, readdirSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { connectMongo } from '../src/db/connection';
import { loadConfig } from '../src/config/load-config';
import { openSse, type SseStream } from '../test/support/sse';
import { CpuSampler, accumulate, type CpuSample } from './lib/cpu';
import { jsonClient } from './lib/http';
import { saveResults } from './lib/report';
import { runWithStack } from './lib/stack';
import { percentile } from './lib/stats';

const STREAMS = Number(process.env.BENCH_EVENT_STREAMS ?? 1000);
const RUNS = Number(process.env.BENCH_EVENT_RUNS ?? 50);
const IDLE_SECONDS = 10;

const definition = {
  nodes: [
    { id: 'in', node_type: 'InputNode', config: { output_schema: { x: 'string' } } },
    { id: 'gate', node_type: 'HumanInterventionNode', config: { message: 'bench' } },
    {
      id: 'next',
      node_type: 'PythonFuncNode',
      config: { code: 'return {"output": "ok"}', output_schema: { output: 'string' } },
    },
    { id: 'out', node_type: 'OutputNode', config: {} },
  ],
  links: [
    { source_id: 'in', target_id: 'gate' },
    { source_id: 'gate', target_id: 'next' },
    { source_id: 'next', target_id: 'out' },
  ],
};

/** Resident memory (MiB) of every process in a process group. */
function groupRssMiB(pgid: number): number {
  let kib = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[2]) !== pgid) continue;
      kib += Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${entry}/status`, 'utf8'))?.[1] ?? 0);
    } catch {
      // the process ended meanwhile
    }
  }
  return kib / 1024;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

runWithStack('spur-bench-events-', async (stack) => {
  const http = jsonClient(stack.apiUrl);
  const sampler = new CpuSampler({
    api: stack.groups.api,
    worker: stack.groups.worker ?? stack.groups.api,
    ferretdb: stack.groups.ferretdb,
  });
  const cpuOver = async <T>(work: () => Promise<T>): Promise<{ result: T; seconds: number; cpu: CpuSample }> => {
    const before = sampler.sample();
    const t0 = performance.now();
    const result = await work();
    const cpu: CpuSample = {};
    accumulate(cpu, before, sampler.sample());
    return { result, seconds: (performance.now() - t0) / 1000, cpu };
  };

  const wf = (await http.post('/wf/', { name: 'events bench', definition })).body as { id: string };
  const runIds: string[] = [];
  for (let i = 0; i < RUNS; i++)
    runIds.push(
      ((await http.post(`/wf/${wf.id}/start_run/`, { initial_inputs: { in: { x: 'b' } } })).body as { id: string }).id,
    );
  for (const id of runIds) {
    while (((await http.get(`/run/${id}/status/`)).body as { status: string }).status !== 'PAUSED') await sleep(50);
  }
  const rssBefore = groupRssMiB(stack.groups.api);

  // Open every stream; each replays its run up to run.paused.
  const streams: Array<{ runId: string; stream: SseStream }> = [];
  for (let i = 0; i < STREAMS; i += 50) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(50, STREAMS - i) }, (_, j) => {
        const runId = runIds[(i + j) % RUNS] as string;
        return openSse(`${stack.apiUrl}/run/${runId}/events/`).then((stream) => ({ runId, stream }));
      }),
    );
    streams.push(...batch);
  }
  await Promise.all(streams.map((s) => s.stream.waitFor((es) => es.some((e) => e.event === 'run.paused'), 120_000)));
  const replayed = new Map(streams.map((s) => [s.stream, s.stream.events.length]));
  sampler.refresh();
  const idle = await cpuOver(() => sleep(IDLE_SECONDS * 1000));
  const rssIdle = groupRssMiB(stack.groups.api);

  // Every run resumes (10 actions in flight) and ends; every stream ends after its final event.
  // The clients' own lateness (this process parses every event of 1000 streams): part of the measured delay.
  const loopDelay = monitorEventLoopDelay({ resolution: 10 });
  loopDelay.enable();
  let rssPeak = rssIdle;
  const peak = setInterval(() => (rssPeak = Math.max(rssPeak, groupRssMiB(stack.groups.api))), 500);
  const active = await cpuOver(async () => {
    for (let i = 0; i < runIds.length; i += 10) {
      await Promise.all(
        runIds
          .slice(i, i + 10)
          .map((id) =>
            http.post(`/wf/process_pause_action/${id}/`, { action: 'APPROVE', user_id: 'bench', inputs: {} }),
          ),
      );
    }
    return Promise.all(streams.map((s) => s.stream.ended));
  });
  clearInterval(peak);
  loopDelay.disable();
  const endedByServer = active.result.filter(Boolean).length;

  // Each live event's delay: client receipt − the event's write time, read from the store.
  const config = loadConfig({ ...process.env, ...stack.env });
  const mongo = await connectMongo(config);
  const written = new Map<string, number>();
  for (const id of runIds) {
    for (let seq = 1; ; seq++) {
      const doc = await mongo
        .collection('run_events')
        .findOne({ _id: `${id}:${seq}` as never }, { projection: { at: 1 } });
      if (!doc) break;
      written.set(`${id}:${seq}`, (doc.at as Date).getTime());
    }
  }
  await mongo.close();
  const delays: number[] = [];
  let live = 0;
  for (const { runId, stream } of streams) {
    for (const e of stream.events.slice(replayed.get(stream) ?? 0)) {
      live++;
      const at = written.get(`${runId}:${e.id}`);
      if (at !== undefined) delays.push(e.receivedAt - at);
    }
  }
  delays.sort((a, b) => a - b);
  const pct = (cpu: CpuSample, name: string, seconds: number) => `${((100 * (cpu[name] ?? 0)) / seconds).toFixed(1)} %`;
  const lines = [
    `# Run event streams — ${new Date().toISOString()}`,
    '',
    `${STREAMS} concurrent SSE streams on one api process, over ${RUNS} runs (in → human gate → Python → out), api and worker as separate`,
    `processes, Temporal dev server, FerretDB (SQLite). **Measured on a shared, loaded machine (2 cores, ~5 other agents running tests):**`,
    'absolute numbers are pessimistic; the load of other processes is in the machine column.',
    '',
    '| | value |',
    '|---|---|',
    `| api RSS before the streams | ${rssBefore.toFixed(0)} MiB |`,
    `| api RSS, ${STREAMS} streams open, idle | ${rssIdle.toFixed(0)} MiB (${(((rssIdle - rssBefore) * 1024) / STREAMS).toFixed(1)} KiB per stream) |`,
    `| api RSS peak while events flow | ${rssPeak.toFixed(0)} MiB |`,
    `| api CPU, idle with ${STREAMS} streams (${RUNS} watchers polling every 200 ms) | ${pct(idle.cpu, 'api', idle.seconds)} of a core; FerretDB ${pct(idle.cpu, 'ferretdb', idle.seconds)}; machine ${pct(idle.cpu, 'machine', idle.seconds)} |`,
    `| active phase (${RUNS} approvals, all runs to their end) | ${active.seconds.toFixed(1)} s; api ${pct(active.cpu, 'api', active.seconds)}, worker ${pct(active.cpu, 'worker', active.seconds)}, FerretDB ${pct(active.cpu, 'ferretdb', active.seconds)}, machine ${pct(active.cpu, 'machine', active.seconds)} |`,
    `| live events delivered | ${live} (${delays.length} with their write time); streams ended by the server after the final event: ${endedByServer}/${STREAMS} |`,
    `| event delay, write → client | p50 ${percentile(delays, 50).toFixed(0)} ms, p99 ${percentile(delays, 99).toFixed(0)} ms, max ${(delays.at(-1) ?? Number.NaN).toFixed(0)} ms |`,
    `| the bench client's event-loop delay meanwhile | p50 ${(loopDelay.percentile(50) / 1e6).toFixed(0)} ms, p99 ${(loopDelay.percentile(99) / 1e6).toFixed(0)} ms |`,
    '',
    'The delay is bounded below by the watcher poll interval (SPUR_EVENT_STREAM_POLL_MS, 200 ms: ~100 ms on average).',
  ];
  saveResults('run-events-latest.md', lines);
  http.close();
});

// Where an inline batch's time goes: a BENCH_BATCH_ROWS-row dataset through the 1-node
// workflow, BENCH_BATCH_REPEATS times, on the bench's own stack with a counting proxy in front of
// FerretDB. Per batch: rows/s, CPU-seconds per process, MongoDB round trips by command, and the
// batch workflow's activity timeline from its Temporal history (time inside chunk activities,
// scheduled -> started, and completed -> next scheduled: the workflow's own hop between chunks).
// Usage: npx tsx bench/batch-profile.ts (knobs: BENCH_BATCH_ROWS 10000, BENCH_BATCH_REPEATS 3,
// BENCH_BATCH_MINI 100; BENCH_CPU_PROF_DIR for V8 profiles of the api and the worker).
// Writes bench/results/batch-profile-latest.md.
import os from 'node:os';
import { runWorkflowId } from '../src/contracts/workflow-names';
import { api, runBatch, uploadDataset } from './lib/batch-client';
import { type HistoryEvent, eventMs, withTemporalClient } from './lib/history';
import { CpuSampler, PROCESS_NAMES, accumulate, type CpuSample } from './lib/cpu';
import { startMongoCounter, type MongoCounter } from './lib/mongo-counter';
import { saveResults } from './lib/report';
import { runWithStack } from './lib/stack';

const num = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const settings = {
  rows: num('BENCH_BATCH_ROWS', 10_000),
  repeats: num('BENCH_BATCH_REPEATS', 3),
  mini: num('BENCH_BATCH_MINI', 100),
};
const ONE_NODE = {
  nodes: [{ id: 'in', node_type: 'InputNode', config: { output_schema: { x: 'string', k: 'string' } } }],
  links: [],
};

/** The batch workflow's activities: how many, time inside them, waiting to start, and the hops between them (ms). */
function activityTimeline(events: HistoryEvent[]) {
  const scheduled = new Map<number, number>();
  const started = new Map<number, number>();
  const out = { activities: 0, insideMs: 0, toStartMs: 0, hopsMs: 0 };
  let lastDone: number | undefined;
  for (const e of events) {
    if (e.activityTaskScheduledEventAttributes) {
      scheduled.set(Number(e.eventId), eventMs(e));
      if (lastDone !== undefined) out.hopsMs += eventMs(e) - lastDone;
    }
    const start = e.activityTaskStartedEventAttributes;
    if (start) {
      started.set(Number(start.scheduledEventId), eventMs(e));
      out.toStartMs += eventMs(e) - (scheduled.get(Number(start.scheduledEventId)) ?? eventMs(e));
    }
    const done = e.activityTaskCompletedEventAttributes;
    if (done) {
      out.activities++;
      out.insideMs += eventMs(e) - (started.get(Number(done.scheduledEventId)) ?? eventMs(e));
      lastDone = eventMs(e);
    }
  }
  return out;
}

let counter: MongoCounter | undefined;
const countedUri = async (ferretUri: string) => {
  const { hostname, port } = new URL(ferretUri);
  counter = await startMongoCounter({ host: hostname, port: Number(port) });
  return counter.uri;
};

runWithStack(
  'spur-bench-batch-profile-',
  async (stack) => {
    const http = api(stack.apiUrl);
    const workflowId = (await http.post('/wf/', { name: 'batch profile', definition: ONE_NODE })).body.id;
    await runBatch(http, workflowId, await uploadDataset(http, 'warm-up', 1000), settings.mini);
    const datasetId = await uploadDataset(http, 'profile', settings.rows);
    const sampler = new CpuSampler(stack.groups);
    const lines = [
      `# Batch profile — ${new Date().toISOString()}`,
      '',
      `${settings.rows} rows through the 1-node workflow, inline mode, mini_batch_size ${settings.mini}; load average before: ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')} (${os.cpus().length} cores, shared).`,
      '',
      `| batch | rows/s | CPU-s ${PROCESS_NAMES.join(' / ')} / machine | Mongo round trips per row | activities | inside activities ms | to start ms | hops between ms |`,
      '|---|---:|---|---:|---:|---:|---:|---:|',
    ];
    const trips: Record<string, number> = {};
    try {
      await withTemporalClient(stack.env.SPUR_TEMPORAL_ADDRESS as string, async (client) => {
        for (let i = 0; i < settings.repeats; i++) {
          counter?.reset();
          const cpu: CpuSample = {};
          const before = sampler.sample();
          const { runId, seconds } = await runBatch(http, workflowId, datasetId, settings.mini);
          accumulate(cpu, before, sampler.sample());
          const counts = counter?.counts() ?? {};
          for (const [k, v] of Object.entries(counts)) trips[k] = (trips[k] ?? 0) + v;
          const total = Object.values(counts).reduce((a, b) => a + b, 0);
          const history = await client.workflow.getHandle(runWorkflowId(runId, '')).fetchHistory();
          const t = activityTimeline(history.events ?? []);
          const cpuText = [...PROCESS_NAMES, 'machine'].map((p) => (cpu[p] ?? 0).toFixed(2)).join(' / ');
          lines.push(
            `| ${i + 1} | ${(settings.rows / seconds).toFixed(0)} | ${cpuText} | ${(total / settings.rows).toFixed(3)} | ${t.activities} | ${t.insideMs.toFixed(0)} | ${t.toStartMs.toFixed(0)} | ${t.hopsMs.toFixed(0)} |`,
          );
        }
      });
    } finally {
      await counter?.close();
    }
    const byCommand = Object.entries(trips).sort((a, b) => b[1] - a[1]);
    lines.push(
      '',
      `Round trips over all ${settings.repeats} batches, by command: ${byCommand.map(([k, v]) => `${k} ${v}`).join(', ')}.`,
    );
    saveResults('batch-profile-latest.md', lines);
  },
  { mongoUri: countedUri },
);

// Pause benchmark (human in the loop): time from a pause action request to the next node
// showing RUNNING in the run projection, over many pauses; and what an action costs in measures load
// does not distort: MongoDB round trips from the request to its answer (a counting proxy), CPU-ms
// per action of each process, the events one run's history holds.
// Usage: npx tsx bench/pause-latency.ts [pauses]; BENCH_TOPOLOGY=split (bench/results/pause-latest.md)
// or combined (pause-latest-combined.md).
import { runWorkflowId } from '../src/contracts/workflow-names';
import { CpuSampler, accumulate, type CpuSample } from './lib/cpu';
import os from 'node:os';
import { type HistoryEvent, eventMs, eventName, tallyEvents, withTemporalClient } from './lib/history';
import { jsonClient, type JsonClient } from './lib/http';
import { startMongoCounter, type MongoCounter } from './lib/mongo-counter';
import { saveResults } from './lib/report';
import { runWithStack, topologyEnv } from './lib/stack';
import { percentileOf } from './lib/stats';

interface RunView {
  id: string;
  status: string;
  tasks: { node_id: string; status: string }[];
}

const definition = {
  nodes: [
    { id: 'in', node_type: 'InputNode', config: {} },
    { id: 'gate', node_type: 'HumanInterventionNode', config: { message: 'bench' } },
    {
      id: 'next',
      node_type: 'PythonFuncNode',
      config: { code: 'return {"output": "ok"}', output_schema: { output: 'string' } },
    },
  ],
  links: [
    { source_id: 'in', target_id: 'gate' },
    { source_id: 'gate', target_id: 'next' },
  ],
};

async function run(http: JsonClient, runId: string): Promise<RunView> {
  return (await http.get(`/run/${runId}/status/`)).body as RunView;
}

async function until(
  http: JsonClient,
  runId: string,
  done: (r: RunView) => boolean,
  timeoutMs = 60_000,
): Promise<RunView> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await run(http, runId);
    if (done(r)) return r;
    if (Date.now() > deadline) throw new Error(`run ${runId} stuck in ${r.status}`);
  }
}

const nextStarted = (r: RunView) =>
  ['RUNNING', 'COMPLETED'].includes(r.tasks.find((t) => t.node_id === 'next')?.status ?? '');

let counter: MongoCounter | undefined;
const tallyInto = (into: Record<string, number>, add: Record<string, number>) => {
  for (const [k, v] of Object.entries(add)) into[k] = (into[k] ?? 0) + v;
};

/**
 * The action's workflow task as the server recorded it: from the task scheduled for the Update to
 * its start on the worker (dispatch) and to its completion (the worker's part: the handler, the
 * projection writes as local activities, the next node's schedule), in ms.
 */
function actionTask(events: HistoryEvent[]): { dispatch: number; worker: number } | null {
  const accepted = events.findIndex((e) => eventName(e) === 'WORKFLOW_EXECUTION_UPDATE_ACCEPTED');
  const before = events.slice(0, Math.max(0, accepted));
  const at = (name: string) => before.findLast((e) => eventName(e) === name);
  const [scheduled, started, completed] = [
    at('WORKFLOW_TASK_SCHEDULED'),
    at('WORKFLOW_TASK_STARTED'),
    at('WORKFLOW_TASK_COMPLETED'),
  ];
  if (!scheduled || !started || !completed) return null;
  return { dispatch: eventMs(started) - eventMs(scheduled), worker: eventMs(completed) - eventMs(started) };
}

/** Every run's action task (p50s), and the last run's history: its events by type, what its action task recorded. */
async function histories(address: string, runIds: string[]): Promise<{ tally: string; task: string }> {
  return withTemporalClient(address, async (client) => {
    const all = await Promise.all(
      runIds.map(async (id) => (await client.workflow.getHandle(runWorkflowId(id, '')).fetchHistory()).events ?? []),
    );
    const events = all.at(-1) ?? [];
    const tally = tallyEvents(events);
    const tasks = all.map(actionTask).filter((t) => t !== null);
    const accepted = events.findIndex((e) => eventName(e) === 'WORKFLOW_EXECUTION_UPDATE_ACCEPTED');
    const recorded = events
      .slice(accepted)
      .filter((e) => eventName(e) !== 'WORKFLOW_TASK_COMPLETED')
      .map(eventName);
    return {
      tally: `${events.length} events (${Object.entries(tally)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')})`,
      task: `scheduled → started p50 ${percentileOf(
        tasks.map((t) => t.dispatch),
        50,
      ).toFixed(1)} ms, started → completed p50 ${percentileOf(
        tasks.map((t) => t.worker),
        50,
      ).toFixed(1)} ms; recorded from the Update on: ${recorded.join(', ')}`,
    };
  });
}

const topology = topologyEnv();

runWithStack(
  'spur-bench-pause-',
  async (stack) => {
    const pauses = Number(process.argv[2] ?? 500);
    const http = jsonClient(stack.apiUrl);
    const wf = (await http.post('/wf/', { name: 'pause bench', definition })).body as { id: string };
    // All pauses first (10 starts in flight), so each measurement sees a quiet, paused run.
    const runIds: string[] = [];
    for (let i = 0; i < pauses; i += 10) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(10, pauses - i) }, () =>
          http.post(`/wf/${wf.id}/start_run/`, { initial_inputs: { in: { x: 1 } } }),
        ),
      );
      runIds.push(...batch.map((r) => (r.body as { id: string }).id));
    }
    for (const id of runIds) await until(http, id, (r) => r.status === 'PAUSED');
    const toRunning: number[] = [];
    const response: number[] = [];
    const roundTrips: Record<string, number> = {};
    const sampler = new CpuSampler(stack.groups);
    const cpu: CpuSample = {};
    for (const id of runIds) {
      counter?.reset();
      const before = sampler.sample();
      const t0 = performance.now();
      const res = await http.post(`/wf/process_pause_action/${id}/`, {
        action: 'APPROVE',
        user_id: 'bench',
        inputs: {},
      });
      response.push(performance.now() - t0);
      accumulate(cpu, before, sampler.sample());
      tallyInto(roundTrips, counter?.counts() ?? {});
      if (res.status !== 200) throw new Error(`action on ${id}: ${res.status} ${JSON.stringify(res.body)}`);
      // The answer is the run as the projection shows it: if it shows the next node started, that is when a client saw it.
      if (!nextStarted(res.body as RunView)) await until(http, id, nextStarted);
      toRunning.push(performance.now() - t0);
      // The run's end (its Python node, the last save) is not part of the next action's measure.
      await until(http, id, (r) => ['COMPLETED', 'FAILED', 'CANCELED'].includes(r.status));
    }
    const fmt = (xs: number[]) =>
      `p50 ${percentileOf(xs, 50).toFixed(1)} ms, p99 ${percentileOf(xs, 99).toFixed(1)} ms`;
    const per = (n: number) => (n / runIds.length).toFixed(2);
    const total = Object.values(roundTrips).reduce((a, b) => a + b, 0);
    const history = await histories(stack.env.SPUR_TEMPORAL_ADDRESS ?? '', runIds);
    const lines = [
      `# Pause benchmark — ${new Date().toISOString()}`,
      '',
      `${pauses} pauses, one at a time (each run ends before the next action), on a warm stack (${topology}: ${topology === 'combined' ? 'one api process hosting the worker' : 'api and worker processes'}, Temporal dev server, FerretDB).`,
      `- action request → next node RUNNING in the projection: ${fmt(toRunning)}`,
      `- action request → HTTP response (the run after the action was applied): ${fmt(response)}`,
      `- MongoDB round trips from the request to its answer, per action: ${per(total)} (${Object.entries(roundTrips)
        .sort((a, b) => b[1] - a[1])
        .map(([k, v]) => `${k} ${per(v)}`)
        .join(', ')})`,
      `- CPU-ms per action, request to answer: ${Object.keys(stack.groups)
        .map((k) => `${k} ${((1000 * (cpu[k] ?? 0)) / runIds.length).toFixed(1)}`)
        .join(', ')}`,
      `- one run's history: ${history.tally}`,
      `- the action's workflow task (server timestamps): ${history.task}`,
      `- load average at the end: ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
      `- target p50 ≤ 25 ms: ${percentileOf(toRunning, 50) <= 25 ? 'met' : 'MISSED'}`,
    ];
    saveResults(topology === 'split' ? 'pause-latest.md' : 'pause-latest-combined.md', lines);
    http.close();
  },
  {
    mongoUri: async (uri) => {
      const { hostname, port } = new URL(uri);
      counter = await startMongoCounter({ host: hostname, port: Number(port) });
      return counter.uri;
    },
  },
);

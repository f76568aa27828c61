// Pause benchmark (issue: human in the loop): time from a pause action request to the next node
// showing RUNNING in the run projection, over many pauses. Usage: npx tsx bench/pause-latency.ts [pauses]
import { jsonClient, type JsonClient } from './lib/http';
import { saveResults } from './lib/report';
import { runWithStack } from './lib/stack';

interface RunView {
  id: string;
  status: string;
  tasks: { node_id: string; status: string }[];
}

const definition = {
  nodes: [
    { id: 'in', node_type: 'InputNode', config: {} },
    { id: 'gate', node_type: 'HumanInterventionNode', config: { message: 'bench' } },
    { id: 'next', node_type: 'PythonFuncNode', config: { code: 'return {"output": "ok"}', output_schema: { output: 'string' } } },
  ],
  links: [
    { source_id: 'in', target_id: 'gate' },
    { source_id: 'gate', target_id: 'next' },
  ],
};

const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))] ?? Number.NaN;

async function run(http: JsonClient, runId: string): Promise<RunView> {
  return (await http.get(`/run/${runId}/status/`)).body as RunView;
}

async function until(http: JsonClient, runId: string, done: (r: RunView) => boolean, timeoutMs = 60_000): Promise<RunView> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await run(http, runId);
    if (done(r)) return r;
    if (Date.now() > deadline) throw new Error(`run ${runId} stuck in ${r.status}`);
  }
}

runWithStack('spur-bench-pause-', async (stack) => {
  const pauses = Number(process.argv[2] ?? 500);
  const http = jsonClient(stack.apiUrl);
  const wf = (await http.post('/wf/', { name: 'pause bench', definition })).body as { id: string };
  // All pauses first (10 starts in flight), so each measurement sees a quiet, paused run.
  const runIds: string[] = [];
  for (let i = 0; i < pauses; i += 10) {
    const batch = await Promise.all(Array.from({ length: Math.min(10, pauses - i) }, () => http.post(`/wf/${wf.id}/start_run/`, { initial_inputs: { in: { x: 1 } } })));
    runIds.push(...batch.map((r) => (r.body as { id: string }).id));
  }
  for (const id of runIds) await until(http, id, (r) => r.status === 'PAUSED');
  const toRunning: number[] = [];
  const response: number[] = [];
  for (const id of runIds) {
    const t0 = performance.now();
    const res = await http.post(`/wf/process_pause_action/${id}/`, { action: 'APPROVE', user_id: 'bench', inputs: {} });
    response.push(performance.now() - t0);
    if (res.status !== 200) throw new Error(`action on ${id}: ${res.status} ${JSON.stringify(res.body)}`);
    await until(http, id, (r) => ['RUNNING', 'COMPLETED'].includes(r.tasks.find((t) => t.node_id === 'next')?.status ?? ''));
    toRunning.push(performance.now() - t0);
  }
  const fmt = (xs: number[]) => `p50 ${percentile(xs, 50).toFixed(1)} ms, p99 ${percentile(xs, 99).toFixed(1)} ms`;
  const lines = [
    `# Pause benchmark — ${new Date().toISOString()}`,
    '',
    `${pauses} pauses, one at a time, on a warm stack (api and worker processes, Temporal dev server, FerretDB).`,
    `- action request → next node RUNNING in the projection: ${fmt(toRunning)}`,
    `- action request → HTTP response (the run after the action was applied): ${fmt(response)}`,
    `- target p50 ≤ 20 ms: ${percentile(toRunning, 50) <= 20 ? 'met' : 'MISSED'}`,
  ];
  saveResults('pause-latest.md', lines);
  http.close();
});

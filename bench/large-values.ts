// Large values benchmark: a 50 MB node output and a 20 MB run input through the
// real processes (api and worker apart), measuring each process's peak RSS (VmHWM) and the
// Temporal history of the largest run. Not part of npm test. Usage: npx tsx bench/large-values.ts
import { readFileSync } from 'node:fs';
import { temporal } from '@temporalio/proto';
import { runWorkflowId } from '../src/contracts/workflow-names';
import { withTemporalClient } from './lib/history';
import { saveResults } from './lib/report';
import { type Stack, runWithStack } from './lib/stack';

const MB = 1_000_000;
/**
 * How far either process's peak RSS may grow over its idle peak across the whole bench: ten copies
 * of the largest value (50 MB). Measured: the api ~1 copy for the output, ~3.5 for the 20 MB input;
 * the worker ~8 for the output (the Python result as text, parsed, measured, stored). A process
 * that kept a copy per request, per node input or per projection write would pass the budget; the
 * bench then fails after writing its table.
 */
const COPIES = 10;
const GROWTH_BUDGET_MIB = (COPIES * 50 * MB) / (1024 * 1024);

const definition = {
  nodes: [
    { id: 'in', title: 'in', node_type: 'InputNode', config: { output_schema: { n: 'integer', x: 'string' } } },
    {
      id: 'py',
      title: 'py',
      node_type: 'PythonFuncNode',
      config: {
        code: 'size = int(input_model["in"]["n"])\nreturn {"s": ("0123456789abcdef" * (size // 16 + 1))[:size], "len": len(input_model["in"]["x"])}',
        output_schema: { s: 'string', len: 'integer' },
        memory_limit_mb: 1024,
        timeout_seconds: 300,
      },
    },
    { id: 'out', title: 'out', node_type: 'OutputNode', config: { output_map: { s: 'py.s', len: 'py.len' } } },
  ],
  links: [
    { source_id: 'in', target_id: 'py' },
    { source_id: 'py', target_id: 'out' },
  ],
};

/** Peak and current resident set of a process, MiB (/proc: VmHWM is the high-water mark). */
function memory(pid: number): { peak: number; now: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? Number.NaN);
  return { peak: kb('VmHWM') / 1024, now: kb('VmRSS') / 1024 };
}

async function call(method: string, url: string, body?: unknown): Promise<{ status: number; text: string }> {
  const res = await fetch(url, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, text: await res.text() };
}

async function historyOf(
  stack: Stack,
  runId: string,
): Promise<{ events: number; bytes: number; largestPayload: number }> {
  return withTemporalClient(stack.env.SPUR_TEMPORAL_ADDRESS as string, async (client) => {
    const history = await client.workflow.getHandle(runWorkflowId(runId)).fetchHistory();
    let largestPayload = 0;
    const walk = (v: unknown) => {
      if (v instanceof Uint8Array) largestPayload = Math.max(largestPayload, v.length);
      else if (Array.isArray(v)) v.forEach(walk);
      else if (v && typeof v === 'object') Object.values(v).forEach(walk);
    };
    walk(history.events);
    return {
      events: history.events?.length ?? 0,
      bytes: temporal.api.history.v1.History.encode(history).finish().length,
      largestPayload,
    };
  });
}

runWithStack('spur-bench-values-', async (stack) => {
  const pids = { api: stack.groups.api, worker: stack.groups.worker as number };
  const base = stack.apiUrl;
  const snap = () => ({ api: memory(pids.api), worker: memory(pids.worker) });
  const idle = snap();
  const wf = JSON.parse((await call('POST', `${base}/wf/`, { name: 'large values bench', definition })).text) as {
    id: string;
  };

  // Warm-up with a small run, so the peaks below are the values' doing, not the first run's.
  await call('POST', `${base}/wf/${wf.id}/run/`, { initial_inputs: { in: { n: 10, x: 'a' } } });
  const warm = snap();

  let t0 = performance.now();
  const blocking = await call('POST', `${base}/wf/${wf.id}/run/`, { initial_inputs: { in: { n: 50 * MB, x: 'a' } } });
  const blockingMs = performance.now() - t0;
  if (blocking.status !== 200 || blocking.text.length < 100 * MB)
    throw new Error(`50 MB run: ${blocking.status}, ${blocking.text.length} bytes`);
  const runs = JSON.parse((await call('GET', `${base}/wf/${wf.id}/runs/?page_size=1`)).text) as Array<{ id: string }>;
  const bigRun = (runs[0] as { id: string }).id;
  t0 = performance.now();
  const record = await call('GET', `${base}/run/${bigRun}/`);
  const recordMs = performance.now() - t0;
  const afterOutput = snap();

  t0 = performance.now();
  const input = await call('POST', `${base}/wf/${wf.id}/run/`, {
    initial_inputs: { in: { n: 1, x: 'y'.repeat(20 * MB) } },
  });
  const inputMs = performance.now() - t0;
  if (input.status !== 200) throw new Error(`20 MB input: ${input.status} ${input.text.slice(0, 300)}`);
  const afterInput = snap();
  const history = await historyOf(stack, bigRun);

  const mib = (x: number) => `${x.toFixed(0)} MiB`;
  const row = (name: string, s: ReturnType<typeof snap>) =>
    `| ${name} | ${mib(s.api.peak)} | ${mib(s.api.peak - idle.api.peak)} | ${mib(s.worker.peak)} | ${mib(s.worker.peak - idle.worker.peak)} |`;
  const lines = [
    `# Large values benchmark — ${new Date().toISOString()}`,
    '',
    'api (src/processes/api.ts) and worker (src/processes/worker.ts) as separate processes; peak RSS is /proc VmHWM (high-water mark since start).',
    '',
    '| after | api peak | api growth | worker peak | worker growth |',
    '|---|---|---|---|---|',
    row('start (idle)', idle),
    row('a small run (warm)', warm),
    row('50 MB output: blocking run + GET /run/{id}/', afterOutput),
    row('20 MB input: blocking run', afterInput),
    '',
    `- 50 MB output: blocking run answered in ${(blockingMs / 1000).toFixed(1)} s (${(blocking.text.length / MB).toFixed(1)} MB body); GET /run/{id}/ in ${(recordMs / 1000).toFixed(1)} s (${(record.text.length / MB).toFixed(1)} MB body)`,
    `- 20 MB input: blocking run answered in ${(inputMs / 1000).toFixed(1)} s`,
    `- history of the 50 MB run: ${history.events} events, ${(history.bytes / 1024).toFixed(1)} KiB encoded, largest payload ${history.largestPayload} bytes`,
  ];
  const growth = { api: afterInput.api.peak - idle.api.peak, worker: afterInput.worker.peak - idle.worker.peak };
  const over = Object.entries(growth).filter(([, mibGrown]) => !(mibGrown <= GROWTH_BUDGET_MIB));
  lines.push(
    `- peak RSS growth budget per process: ${mib(GROWTH_BUDGET_MIB)} (${COPIES} copies of the 50 MB value): ${over.length === 0 ? 'kept' : `OVER (${over.map(([name, g]) => `${name} ${mib(g)}`).join(', ')})`}`,
  );
  saveResults('large-values-latest.md', lines);
  if (over.length > 0)
    throw new Error(
      `peak RSS grew over ${mib(GROWTH_BUDGET_MIB)}: ${over.map(([name, g]) => `${name} ${mib(g)}`).join(', ')}`,
    );
});

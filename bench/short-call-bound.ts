// Where a local activity stops paying: one model call that takes D seconds at the provider, run as
// a short call (a local activity: timeout_seconds 60) and as a regular activity (the same timeout,
// heartbeat_timeout_seconds 20, which keeps it regular), for several D. CPU-ms per run over every
// process of the combined stack (api with its worker, Temporal, FerretDB), with each process's idle
// CPU over the same time taken off, and the history events of one run. A local activity longer
// than the workflow task timeout (10 s) keeps its task alive by completing it and taking a new one
// every 8 s; a regular activity heartbeats at most every 16 s without a history event.
// The bound in temporal/workflows/activity-options.ts (LOCAL_CALL_MAX_SECONDS) rests on this.
//
// Usage: npx tsx bench/short-call-bound.ts [runs per block=20]. Writes bench/results/short-call-bound-latest.md.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { runWorkflowId } from '../src/contracts/workflow-names';
import { CpuSampler, accumulate, type CpuSample } from './lib/cpu';
import { jsonClient, type JsonClient } from './lib/http';
import { saveResults } from './lib/report';
import { type Stack, startStack } from './lib/stack';
import { startFakeLlmServer } from '../test/support/fake-llm-server';

const RUNS = Number(process.argv[2] ?? 20);
const DURATIONS_S = [0, 5, 15, 30, 55];
const IDLE_MS = 10_000;
const GROUPS = ['api', 'temporal', 'ferretdb'] as const;

const MODES = {
  local: { timeout_seconds: 60 },
  regular: { timeout_seconds: 60, heartbeat_timeout_seconds: 20 },
} as const;
type Mode = keyof typeof MODES;

const definition = (config: Record<string, unknown>) => ({
  nodes: [
    { id: 'in', title: 'in', node_type: 'InputNode', config: { output_schema: { d: 'string' } }, parent_id: null },
    {
      id: 'llm',
      title: 'llm',
      node_type: 'SingleLLMCallNode',
      config: {
        llm_info: { model: 'openai/gpt-4o', max_tokens: 50, temperature: 0 },
        user_message: 'wait {{in.d}}',
        output_schema: { output: 'string' },
        ...config,
      },
      parent_id: null,
    },
    { id: 'out', title: 'out', node_type: 'OutputNode', config: { output_map: { a: 'llm.output' } }, parent_id: null },
  ],
  links: [
    { source_id: 'in', target_id: 'llm', source_handle: null, target_handle: null },
    { source_id: 'llm', target_id: 'out', source_handle: null, target_handle: null },
  ],
});

const total = (s: CpuSample) => GROUPS.reduce((sum, g) => sum + (s[g] ?? 0), 0);

async function block(http: JsonClient, workflowId: string, seconds: number): Promise<string> {
  const ids = await Promise.all(
    Array.from({ length: RUNS }, async (_, i) => {
      const res = await http.post(`/wf/${workflowId}/start_run/`, {
        initial_inputs: { in: { d: `${seconds * 1000}ms #${i}` } },
      });
      if (res.status !== 200) throw new Error(`start_run: ${res.status}`);
      return (res.body as { id: string }).id;
    }),
  );
  for (const id of ids) {
    for (;;) {
      const status = ((await http.get(`/runs/${id}/status/`)).body as { status: string }).status;
      if (status === 'COMPLETED') break;
      if (status !== 'PENDING' && status !== 'RUNNING') throw new Error(`run ${id}: ${status}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  return ids[0] as string;
}

async function main(): Promise<void> {
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'spur-short-bound-'));
  const fake = await startFakeLlmServer();
  // The prompt names how long the provider takes: `wait <ms>ms #i`.
  fake.respondWith((req) => {
    const ms = Number(/wait (\d+)ms/.exec(JSON.stringify(req.body))?.[1] ?? 0);
    return { content: JSON.stringify({ output: 'ok' }), ...(ms > 0 ? { delayMs: ms } : {}) };
  });
  const stack: Stack = await startStack({
    tmpDir: tmp,
    topology: 'combined',
    extraEnv: { SPUR_OUTBOUND_ALLOW_PRIVATE: 'true' },
  });
  const http = jsonClient(stack.apiUrl);
  const connection = await Connection.connect({ address: stack.env.SPUR_TEMPORAL_ADDRESS ?? '' });
  const client = new Client({ connection });
  const rows: string[] = [];
  try {
    for (const [name, value] of [
      ['OPENAI_API_BASE', `${fake.url}/v1`],
      ['OPENAI_API_KEY', 'sk-bench'],
    ] as const) {
      if ((await http.post('/env-mgmt/', { name, value })).status !== 200) throw new Error(`env-mgmt ${name}`);
    }
    const workflows = {} as Record<Mode, string>;
    for (const mode of Object.keys(MODES) as Mode[]) {
      const res = await http.post('/wf/', { name: `bound ${mode}`, definition: definition(MODES[mode]) });
      workflows[mode] = (res.body as { id: string }).id;
      await block(http, workflows[mode], 0); // warm-up
    }
    const sampler = new CpuSampler(stack.groups);
    // What the stack burns doing nothing (pollers, timers), per second: taken off every block.
    const idle0 = sampler.sample();
    await new Promise((r) => setTimeout(r, IDLE_MS));
    const idle: CpuSample = {};
    accumulate(idle, idle0, sampler.sample());
    const idlePerSecond = total(idle) / (IDLE_MS / 1000);
    for (const seconds of DURATIONS_S) {
      const cells: string[] = [];
      for (const mode of Object.keys(MODES) as Mode[]) {
        const before = sampler.sample();
        const t0 = performance.now();
        const runId = await block(http, workflows[mode], seconds);
        const wall = (performance.now() - t0) / 1000;
        const used: CpuSample = {};
        accumulate(used, before, sampler.sample());
        const perRun = (1000 * Math.max(0, total(used) - idlePerSecond * wall)) / RUNS;
        const events = (await client.workflow.getHandle(runWorkflowId(runId, '')).fetchHistory()).events?.length ?? 0;
        cells.push(`${perRun.toFixed(1)} | ${events}`);
      }
      rows.push(`| ${seconds} | ${cells.join(' | ')} |`);
      console.log(rows.at(-1));
    }
    saveResults('short-call-bound-latest.md', [
      `# A short call as a local activity or a regular one — ${new Date().toISOString()}`,
      '',
      `${RUNS} runs at once per block, one model call each taking the given time at a local fake provider; the combined stack; CPU-ms per run over api (with its worker), Temporal and FerretDB, their idle CPU over the block (${(1000 * idlePerSecond).toFixed(1)} CPU-ms a second, measured for ${IDLE_MS / 1000} s before) taken off; history events of one run.`,
      '',
      '| call takes (s) | local: CPU-ms per run | local: history events | regular: CPU-ms per run | regular: history events |',
      '| ---: | ---: | ---: | ---: | ---: |',
      ...rows,
    ]);
  } finally {
    await connection.close();
    http.close();
    await stack.stop();
    await fake.close();
    rmSync(tmp, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});

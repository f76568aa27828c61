// Provider batch mode benchmark (llm_mode "provider_batch", docs/batch-mode.md): what a 1 000-row
// batch of one model call per row costs online and as a provider batch, the same fake provider
// answering both with the same token counts; how long and how much CPU each takes; and the CPU the
// stack spends while a provider batch is being worked on at the provider (the fake holds it for a
// window the bench controls) — a wait on Temporal timers should cost ~nothing.
// Usage: npx tsx bench/provider-batch.ts [rows] [wait seconds] (bench/results/provider-batch-latest.md)
import { startFakeLlmServer } from '../test/support/fake-llm-server';
import { CpuSampler, PROCESS_NAMES, accumulate, type CpuSample } from './lib/cpu';
import { useFakeOpenAi } from './lib/fake-openai';
import { jsonClient, type JsonClient } from './lib/http';
import { saveResults } from './lib/report';
import { runWithStack } from './lib/stack';

const MODEL = 'openai/gpt-4o-mini';
/** Tokens the fake reports for every call, online or in a batch. */
const USAGE = { input: 400, output: 120 };

const oneCall = {
  nodes: [
    { id: 'in', title: 'in', node_type: 'InputNode', config: { output_schema: { x: 'string' } } },
    {
      id: 'ask',
      title: 'ask',
      node_type: 'SingleLLMCallNode',
      config: { llm_info: { model: MODEL, max_tokens: 200 }, user_message: 'label {{in.x}}' },
    },
    { id: 'out', title: 'out', node_type: 'OutputNode', config: { output_map: { answer: 'ask.output' } } },
  ],
  links: [
    { source_id: 'in', target_id: 'ask' },
    { source_id: 'ask', target_id: 'out' },
  ],
};

interface Measured {
  seconds: number;
  cpu: CpuSample;
  costUsd: number;
  calls: number;
}

async function dataset(apiUrl: string, rows: number): Promise<string> {
  const csv = ['x', ...Array.from({ length: rows }, (_, i) => `item ${i}`)].join('\n');
  const fd = new FormData();
  fd.append('file', new Blob([csv], { type: 'text/csv' }), 'rows.csv');
  const res = await fetch(`${apiUrl}/ds/?name=bench-provider-batch`, { method: 'POST', body: fd });
  if (res.status !== 200) throw new Error(`dataset: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { id: string }).id;
}

async function until(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

async function runBatch(
  api: JsonClient,
  sampler: CpuSampler,
  datasetId: string,
  llmMode: 'online' | 'provider_batch',
  duringWait?: () => Promise<void>,
): Promise<Measured> {
  const wf = (await api.post('/wf/', { name: `bench ${llmMode}`, definition: oneCall })).body as { id: string };
  const before = sampler.sample();
  const t0 = performance.now();
  const res = await api.post(`/wf/${wf.id}/start_batch_run/`, {
    dataset_id: datasetId,
    mini_batch_size: 50,
    llm_mode: llmMode,
  });
  if (res.status !== 200) throw new Error(`start_batch_run: ${res.status} ${JSON.stringify(res.body)}`);
  const id = (res.body as { id: string }).id;
  await duringWait?.();
  let status = '';
  await until(
    async () => {
      status = ((await api.get(`/run/${id}/status/`)).body as { status: string }).status;
      return !['PENDING', 'RUNNING'].includes(status);
    },
    1_800_000,
    `batch ${id}`,
  );
  if (status !== 'COMPLETED') throw new Error(`batch ${id} ended ${status}`);
  const seconds = (performance.now() - t0) / 1000;
  const cpu: CpuSample = {};
  accumulate(cpu, before, sampler.sample());
  const groups = (await api.get('/usage/?group_by=workflow')).body as { groups: Array<Record<string, unknown>> };
  const group = groups.groups.find((g) => g.key === wf.id);
  return { seconds, cpu, costUsd: Number(group?.cost_usd ?? 0), calls: Number(group?.calls ?? 0) };
}

const cpuCells = (cpu: CpuSample) => [...PROCESS_NAMES, 'machine'].map((p) => (cpu[p] ?? 0).toFixed(1)).join(' | ');

runWithStack(
  'spur-bench-provider-batch-',
  async (stack) => {
    const rows = Number(process.argv[2] ?? 1000);
    const waitSeconds = Number(process.argv[3] ?? 120);
    const api = jsonClient(stack.apiUrl);
    const fake = await startFakeLlmServer();
    try {
      await useFakeOpenAi(api, fake.url);
      fake.respondWith(() => ({ content: JSON.stringify({ output: 'ok' }), usage: USAGE }));
      const ds = await dataset(stack.apiUrl, rows);
      const sampler = new CpuSampler(stack.groups);

      // The stack idle for as long as the wait below: what it spends with nothing to do (pollers, caches).
      const idleBefore = sampler.sample();
      const idleT0 = performance.now();
      await new Promise((r) => setTimeout(r, waitSeconds * 1000));
      const idle = { seconds: (performance.now() - idleT0) / 1000, cpu: {} as CpuSample };
      accumulate(idle.cpu, idleBefore, sampler.sample());

      const online = await runBatch(api, sampler, ds, 'online');
      const onlineRequests = fake.requests.length;

      // The provider holds the batch for `waitSeconds`; the stack's CPU over that window is the wait's.
      let wait: { seconds: number; cpu: CpuSample } | undefined;
      fake.batches.hold();
      const batched = await runBatch(api, sampler, ds, 'provider_batch', async () => {
        await until(async () => fake.batches.batches.length > 0, 300_000, 'the provider batch');
        // The first poll (5 s) and the rows' last writes settle before the window opens.
        await new Promise((r) => setTimeout(r, 6000));
        const before = sampler.sample();
        const t0 = performance.now();
        await new Promise((r) => setTimeout(r, waitSeconds * 1000));
        const cpu: CpuSample = {};
        accumulate(cpu, before, sampler.sample());
        wait = { seconds: (performance.now() - t0) / 1000, cpu };
        fake.batches.release();
      });
      const polls = fake.batches.batches.reduce((n, b) => n + b.polls, 0);
      const batchOnline = fake.requests.length - onlineRequests;
      const w = wait as unknown as { seconds: number; cpu: CpuSample };
      const stackMsPerSecond = (m: { seconds: number; cpu: CpuSample }) =>
        (PROCESS_NAMES.filter((p) => p !== 'bench').reduce((sum, p) => sum + (m.cpu[p] ?? 0), 0) / m.seconds) * 1000;

      saveResults('provider-batch-latest.md', [
        `# Provider batch mode benchmark — ${new Date().toISOString()}`,
        '',
        `One stack (api, worker, Temporal dev server, FerretDB), a local fake OpenAI provider answering every call with ${USAGE.input} prompt and ${USAGE.output} completion tokens, online or in its Batch API. ${rows} rows, one ${MODEL} call each, mini_batch_size 50.`,
        '',
        '| llm_mode | cost (USD) | calls | online requests | wall (s) | ' +
          [...PROCESS_NAMES, 'machine'].join(' | ') +
          ' |',
        '| --- | ---: | ---: | ---: | ---: | ' + [...PROCESS_NAMES, 'machine'].map(() => '---:').join(' | ') + ' |',
        `| online | ${online.costUsd.toFixed(6)} | ${online.calls} | ${onlineRequests} | ${online.seconds.toFixed(1)} | ${cpuCells(online.cpu)} |`,
        `| provider_batch | ${batched.costUsd.toFixed(6)} | ${batched.calls} | ${batchOnline} | ${batched.seconds.toFixed(1)} | ${cpuCells(batched.cpu)} |`,
        '',
        `- cost ratio provider_batch / online: ${(batched.costUsd / online.costUsd).toFixed(3)}`,
        `- the provider_batch row includes the ${waitSeconds} s the fake held the batch; CPU-seconds per process over the whole batch run (machine: every busy core)`,
        `- while the batch was held (${w.seconds.toFixed(0)} s): ${cpuCells(w.cpu)} CPU-s (api, worker, Temporal, FerretDB, bench, machine): ${stackMsPerSecond(w).toFixed(1)} CPU-ms per second for the stack, ${polls} polls of the provider in all`,
        `- the same stack idle for as long, before any batch: ${cpuCells(idle.cpu)} CPU-s: ${stackMsPerSecond(idle).toFixed(1)} CPU-ms per second; the wait's own cost is the difference, ${(stackMsPerSecond(w) - stackMsPerSecond(idle)).toFixed(1)} CPU-ms per second`,
      ]);
    } finally {
      await fake.close();
      api.close();
    }
  },
  { extraEnv: { SPUR_OUTBOUND_ALLOW_PRIVATE: 'true' } },
);

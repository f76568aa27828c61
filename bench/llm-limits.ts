// Provider-limit benchmark (PUT /api/limits/): what a fleet-wide limit adds to a model call, and
// whether 200 one-call runs under max_concurrent 10 against a provider answering in 200 ms go as
// fast as the limit allows (10 / 0.2 s = 50 calls/s) — the limit, not Spur, as the bottleneck.
// 1. Overhead: one blocking run at a time, alternating a model under a limit that never binds
//    (max_concurrent 1000) and a model under none, same workflow shape, same fake provider.
// 2. Throughput: 200 runs started at once, under max_concurrent 10, then the same 200 with no limit.
// Usage: npx tsx bench/llm-limits.ts [sequential runs of each] (bench/results/llm-limits-latest.md)
import os from 'node:os';
import { mostAtOnce, startFakeLlmServer } from '../test/support/fake-llm-server';
import { jsonClient, type JsonClient } from './lib/http';
import { saveResults } from './lib/report';
import { runWithStack } from './lib/stack';
import { percentile } from './lib/stats';

const LIMITED = 'openai/gpt-4o-mini';
const UNLIMITED = 'openai/gpt-4o';
const BURST = 200;
const SLOTS = 10;
const PROVIDER_MS = 200;

/** Nearest-rank percentiles (bench/lib/stats.ts) of unsorted samples. */
const pct = (xs: readonly number[], p: number) =>
  percentile(
    [...xs].sort((a, b) => a - b),
    p,
  );
const median = (xs: readonly number[]) => pct(xs, 50);

const oneCall = (model: string) => ({
  nodes: [
    { id: 'in', title: 'in', node_type: 'InputNode', config: { output_schema: { x: 'string' } } },
    {
      id: 'ask',
      title: 'ask',
      node_type: 'SingleLLMCallNode',
      config: { llm_info: { model, max_tokens: 20 }, user_message: 'say {{in.x}}' },
    },
    { id: 'out', title: 'out', node_type: 'OutputNode', config: { output_map: { answer: 'ask.output' } } },
  ],
  links: [
    { source_id: 'in', target_id: 'ask' },
    { source_id: 'ask', target_id: 'out' },
  ],
});

async function putLimits(apiUrl: string, limits: unknown[]): Promise<void> {
  const res = await fetch(`${apiUrl}/limits/`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(limits),
  });
  if (res.status !== 200) throw new Error(`PUT /limits/: ${res.status} ${await res.text()}`);
}

async function blockingRun(api: JsonClient, workflowId: string, x: string): Promise<number> {
  const t0 = performance.now();
  const res = await api.post(`/wf/${workflowId}/run/`, { initial_inputs: { in: { x } } });
  if (res.status !== 200) throw new Error(`run: ${res.status} ${JSON.stringify(res.body)}`);
  return performance.now() - t0;
}

/** Starts `n` runs at once and waits for all: seconds from the first start to the last end. */
async function burst(api: JsonClient, workflowId: string, n: number, tag: string): Promise<number> {
  const t0 = performance.now();
  const ids = await Promise.all(
    Array.from({ length: n }, async (_, i) => {
      const res = await api.post(`/wf/${workflowId}/start_run/`, { initial_inputs: { in: { x: `${tag}${i}` } } });
      if (res.status !== 200) throw new Error(`start_run: ${res.status} ${JSON.stringify(res.body)}`);
      return (res.body as { id: string }).id;
    }),
  );
  const open = new Set(ids);
  const deadline = Date.now() + 300_000;
  while (open.size > 0) {
    for (const id of [...open]) {
      const status = ((await api.get(`/run/${id}/status/`)).body as { status: string }).status;
      if (status === 'COMPLETED') open.delete(id);
      else if (['FAILED', 'CANCELED'].includes(status)) throw new Error(`run ${id} ended ${status}`);
    }
    if (Date.now() > deadline) throw new Error(`${open.size} runs still open`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return (performance.now() - t0) / 1000;
}

runWithStack(
  'spur-bench-limits-',
  async (stack) => {
    const runs = Number(process.argv[2] ?? 60);
    const api = jsonClient(stack.apiUrl);
    const fake = await startFakeLlmServer();
    try {
      for (const [name, value] of [
        ['OPENAI_API_BASE', `${fake.url}/v1`],
        ['OPENAI_API_KEY', 'sk-bench'],
      ]) {
        const res = await api.post('/env-mgmt/', { name, value });
        if (res.status !== 200) throw new Error(`env-mgmt ${name}: ${res.status}`);
      }
      const create = async (model: string) =>
        ((await api.post('/wf/', { name: `limits bench ${model}`, definition: oneCall(model) })).body as { id: string })
          .id;
      const limitedWf = await create(LIMITED);
      const unlimitedWf = await create(UNLIMITED);

      // 1. Overhead per call, the provider answering at once.
      fake.respondWith(() => ({ content: JSON.stringify({ output: 'ok' }) }));
      await putLimits(stack.apiUrl, [{ key: LIMITED, max_concurrent: 1000 }]);
      for (let i = 0; i < 10; i++) {
        await blockingRun(api, limitedWf, `w${i}`);
        await blockingRun(api, unlimitedWf, `w${i}`);
      }
      const limited: number[] = [];
      const unlimited: number[] = [];
      for (let i = 0; i < runs; i++) {
        if (i % 2 === 0) {
          limited.push(await blockingRun(api, limitedWf, `l${i}`));
          unlimited.push(await blockingRun(api, unlimitedWf, `u${i}`));
        } else {
          unlimited.push(await blockingRun(api, unlimitedWf, `u${i}`));
          limited.push(await blockingRun(api, limitedWf, `l${i}`));
        }
      }

      // 2. Throughput of a burst under max_concurrent, then without a limit.
      fake.respondWith(() => ({ content: JSON.stringify({ output: 'ok' }), delayMs: PROVIDER_MS }));
      await putLimits(stack.apiUrl, [{ key: LIMITED, max_concurrent: SLOTS }]);
      const sentBefore = fake.requests.length;
      const limitedSeconds = await burst(api, limitedWf, BURST, 'b');
      const limitedRequests = fake.requests.slice(sentBefore);
      const unlimitedSeconds = await burst(api, unlimitedWf, BURST, 'f');
      const floorSeconds = (BURST * PROVIDER_MS) / 1000 / SLOTS;

      const fmt = (xs: number[]) =>
        `p50 ${median(xs).toFixed(1)} ms, p90 ${pct(xs, 90).toFixed(1)} ms, p99 ${pct(xs, 99).toFixed(1)} ms`;
      const atOnce = mostAtOnce(limitedRequests);
      saveResults('llm-limits-latest.md', [
        `# Provider-limit benchmark — ${new Date().toISOString()}`,
        '',
        `One stack (api and worker processes, Temporal dev server, FerretDB), a local fake OpenAI-compatible provider.`,
        '',
        `## Overhead of a limit per model call (${runs} blocking runs of each, alternating, after 10 warm-up runs of each)`,
        '',
        'Input → one LLM call (answered at once) → Output, timed from POST /wf/{id}/run/ to its answer.',
        '',
        `- under a limit that never binds (max_concurrent 1000): ${fmt(limited)}`,
        `- under no limit: ${fmt(unlimited)}`,
        `- limiter overhead per call: ${(median(limited) - median(unlimited)).toFixed(1)} ms at the median (ratio ${(median(limited) / median(unlimited)).toFixed(2)})`,
        '',
        `## Throughput: ${BURST} one-call runs started at once, the provider taking ${PROVIDER_MS} ms`,
        '',
        `- under max_concurrent ${SLOTS}: ${limitedSeconds.toFixed(2)} s (${(BURST / limitedSeconds).toFixed(1)} runs/s); the limit's floor is ${floorSeconds.toFixed(1)} s (${(BURST / floorSeconds).toFixed(0)} runs/s): ${((floorSeconds / limitedSeconds) * 100).toFixed(0)} % of what the limit allows`,
        `- most requests at the provider at once under the limit: ${atOnce}`,
        `- the same ${BURST} runs with no limit: ${unlimitedSeconds.toFixed(2)} s (${(BURST / unlimitedSeconds).toFixed(1)} runs/s): Spur's own pace on this machine, against which the limited burst is ${(limitedSeconds / unlimitedSeconds).toFixed(2)}× as long`,
        `- load average at the end: ${os
          .loadavg()
          .map((l) => l.toFixed(2))
          .join(' ')} on ${os.cpus().length} CPUs`,
      ]);
    } finally {
      await fake.close();
      api.close();
    }
  },
  { extraEnv: { SPUR_OUTBOUND_ALLOW_PRIVATE: 'true' } },
);

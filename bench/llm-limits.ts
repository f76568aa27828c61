// Provider-limit benchmark (PUT /api/limits/): what a fleet-wide limit adds to a model call, and
// whether 200 one-call runs under max_concurrent 10 against a provider answering in 200 ms go as
// fast as the limit allows (10 / 0.2 s = 50 calls/s) — the limit, not Spur, as the bottleneck.
// 1. Overhead: one blocking run at a time, alternating a model under a limit that never binds
//    (max_concurrent 1000) and a model under none, same workflow shape, same fake provider.
// 2. Throughput: 200 runs started at once, under max_concurrent 10, and the same 200 with no limit
//    before and after; then under the limit again with a provider slow enough that the limit binds.
// Usage: npx tsx bench/llm-limits.ts [sequential runs of each] (bench/results/llm-limits-latest.md)
import os from 'node:os';
import { type RecordedRequest, mostAtOnce, startFakeLlmServer } from '../test/support/fake-llm-server';
import { CpuSampler, PROCESS_NAMES, accumulate, type CpuSample } from './lib/cpu';
import { useFakeOpenAi } from './lib/fake-openai';
import { jsonClient, type JsonClient } from './lib/http';
import { saveResults } from './lib/report';
import { runWithStack } from './lib/stack';
import { median, percentileOf } from './lib/stats';

const LIMITED = 'openai/gpt-4o-mini';
const UNLIMITED = 'openai/gpt-4o';
const BURST = 200;
const SLOTS = 10;
const PROVIDER_MS = 200;
/** A provider slow enough that the limit's floor (200 × 2 s / 10 = 40 s) is above Spur's own pace on 2 cores. */
const SLOW_PROVIDER_MS = 2000;

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

/** Starts `n` runs at once and waits for all: seconds from the first start to the last end, and the CPU it took. */
async function burst(
  api: JsonClient,
  sampler: CpuSampler,
  workflowId: string,
  n: number,
  tag: string,
): Promise<{ seconds: number; cpu: CpuSample }> {
  const t0 = performance.now();
  const before = sampler.sample();
  const ids = await Promise.all(
    Array.from({ length: n }, async (_, i) => {
      const res = await api.post(`/wf/${workflowId}/start_run/`, { initial_inputs: { in: { x: `${tag}${i}` } } });
      if (res.status !== 200) throw new Error(`start_run: ${res.status} ${JSON.stringify(res.body)}`);
      return (res.body as { id: string }).id;
    }),
  );
  // Waits on the runs in the order they started (about the order they end), one status read at a
  // time, so that polling adds the same small load to every burst however long it lasts.
  const deadline = Date.now() + 300_000;
  for (let i = 0; i < ids.length;) {
    const id = ids[i] as string;
    const status = ((await api.get(`/run/${id}/status/`)).body as { status: string }).status;
    if (status === 'COMPLETED') {
      i++;
      continue;
    }
    if (['FAILED', 'CANCELED'].includes(status)) throw new Error(`run ${id} ended ${status}`);
    if (Date.now() > deadline) throw new Error(`${ids.length - i} runs still open`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const cpu: CpuSample = {};
  accumulate(cpu, before, sampler.sample());
  return { seconds: (performance.now() - t0) / 1000, cpu };
}

/**
 * Where a limited burst's time goes beyond the limit's floor: how long after the burst started the
 * provider saw its first request, how long a freed slot stayed unused (the k-th request, k past the
 * limit, takes the slot the (k-limit)-th answer freed), and how long the runs took to end after
 * the provider's last answer.
 */
function slotUse(requests: readonly RecordedRequest[], slots: number, startedAt: number, endedAt: number) {
  const starts = requests.map((r) => r.at).sort((a, b) => a - b);
  const ends = requests.map((r) => r.answered?.at ?? endedAt).sort((a, b) => a - b);
  const idle = starts.slice(slots).map((at, i) => at - ends[i]!);
  return {
    firstMs: (starts[0] ?? endedAt) - startedAt,
    idleP50: median(idle),
    idleP90: percentileOf(idle, 90),
    idleTotalS: idle.reduce((sum, ms) => sum + ms, 0) / 1000 / slots,
    tailMs: endedAt - (ends.at(-1) ?? endedAt),
  };
}

/** CPU-seconds of a burst per process, as a table row. */
const cpuRow = (name: string, cpu: CpuSample) =>
  `| ${name} | ${[...PROCESS_NAMES, 'machine'].map((p) => (cpu[p] ?? 0).toFixed(1)).join(' | ')} |`;

runWithStack(
  'spur-bench-limits-',
  async (stack) => {
    const runs = Number(process.argv[2] ?? 60);
    const api = jsonClient(stack.apiUrl);
    const fake = await startFakeLlmServer();
    try {
      await useFakeOpenAi(api, fake.url);
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

      // 2. Throughput of a burst under max_concurrent and without a limit: unlimited, limited,
      // unlimited again (the stack warms up and its database grows), the unlimited pace their mean.
      fake.respondWith(() => ({ content: JSON.stringify({ output: 'ok' }), delayMs: PROVIDER_MS }));
      await putLimits(stack.apiUrl, [{ key: LIMITED, max_concurrent: SLOTS }]);
      const sampler = new CpuSampler(stack.groups);
      const firstFree = await burst(api, sampler, unlimitedWf, BURST, 'f');
      const sentBefore = fake.requests.length;
      const limitedBurst = await burst(api, sampler, limitedWf, BURST, 'b');
      const limitedRequests = fake.requests.slice(sentBefore);
      const secondFree = await burst(api, sampler, unlimitedWf, BURST, 'g');
      // 3. The same burst where the limit, not this machine, must be the bottleneck.
      fake.respondWith(() => ({ content: JSON.stringify({ output: 'ok' }), delayMs: SLOW_PROVIDER_MS }));
      const slowSent = fake.requests.length;
      const slowStarted = Date.now();
      const slowBurst = await burst(api, sampler, limitedWf, BURST, 's');
      const slowUse = slotUse(fake.requests.slice(slowSent), SLOTS, slowStarted, Date.now());
      const slowAtOnce = mostAtOnce(fake.requests.slice(slowSent));
      const slowFloor = (BURST * SLOW_PROVIDER_MS) / 1000 / SLOTS;
      const limitedSeconds = limitedBurst.seconds;
      const unlimitedSeconds = (firstFree.seconds + secondFree.seconds) / 2;
      const floorSeconds = (BURST * PROVIDER_MS) / 1000 / SLOTS;

      const fmt = (xs: number[]) =>
        `p50 ${median(xs).toFixed(1)} ms, p90 ${percentileOf(xs, 90).toFixed(1)} ms, p99 ${percentileOf(xs, 99).toFixed(1)} ms`;
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
        `- the same ${BURST} runs with no limit, before and after: ${firstFree.seconds.toFixed(2)} s and ${secondFree.seconds.toFixed(2)} s (${(BURST / unlimitedSeconds).toFixed(1)} runs/s on average): Spur's own pace on this machine, against which the limited burst is ${(limitedSeconds / unlimitedSeconds).toFixed(2)}× as long`,
        '',
        `## The same burst with the provider taking ${SLOW_PROVIDER_MS} ms: the limit binds, not the machine`,
        '',
        `- under max_concurrent ${SLOTS}: ${slowBurst.seconds.toFixed(2)} s against the limit's floor of ${slowFloor.toFixed(1)} s (${((slowFloor / slowBurst.seconds) * 100).toFixed(0)} % of what the limit allows); most requests at the provider at once: ${slowAtOnce}`,
        `- where the rest went: the first request reached the provider ${slowUse.firstMs} ms after the burst began; a freed slot stayed unused ${slowUse.idleP50.toFixed(0)} ms at the median (p90 ${slowUse.idleP90.toFixed(0)} ms), ${slowUse.idleTotalS.toFixed(1)} s per slot over the burst; the runs ended ${slowUse.tailMs} ms after the last answer`,
        '',
        `CPU-seconds of each burst per process (machine: every busy core, other work included):`,
        '',
        `| burst | ${[...PROCESS_NAMES, 'machine'].join(' | ')} |`,
        `| --- | ${[...PROCESS_NAMES, 'machine'].map(() => '---').join(' | ')} |`,
        cpuRow('no limit (before)', firstFree.cpu),
        cpuRow(`max_concurrent ${SLOTS}`, limitedBurst.cpu),
        cpuRow('no limit (after)', secondFree.cpu),
        cpuRow(`max_concurrent ${SLOTS}, provider ${SLOW_PROVIDER_MS} ms`, slowBurst.cpu),
        '',
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

// What the outbound client costs on an LLM call: the OpenAI SDK's chat completion against the local
// fake provider, once through Node's own fetch (no address policy: what every node used before
// src/outbound) and once through the outbound client (address checked at connect, redirects by
// hand, streamed size cap), both with keep-alive. Interleaved call by call so load from other
// processes hits both alike; medians reported. Writes bench/results/outbound-latest.md.
// Usage: npx tsx bench/outbound.ts [calls=400]
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import OpenAI from 'openai';
import { loadConfig } from '../src/config/load-config';
import { createOutboundFetch } from '../src/outbound/outbound-fetch';
import { REPO_ROOT } from '../scripts/lib/tools';
import { startFakeLlmServer } from '../test/support/fake-llm-server';
import { msSince, round, summarize } from './lib/stats';

const calls = Number(process.argv[2] ?? 400);
const warmup = 20;

async function main(): Promise<void> {
  const fake = await startFakeLlmServer();
  const options = { apiKey: 'sk-bench', baseURL: `${fake.url}/v1`, maxRetries: 0 };
  const clients = {
    'global fetch (no policy)': new OpenAI(options),
    'outbound client (policy, private allowed)': new OpenAI({
      ...options,
      fetch: createOutboundFetch(loadConfig({ SPUR_OUTBOUND_ALLOW_PRIVATE: 'true' }).outbound),
    }),
  };
  const samples: Record<string, number[]> = Object.fromEntries(Object.keys(clients).map((name) => [name, []]));
  try {
    for (let i = 0; i < warmup + calls; i++) {
      for (const [name, client] of Object.entries(clients)) {
        const start = process.hrtime.bigint();
        const reply = await client.chat.completions.create({
          model: 'gpt-4o-mini',
          messages: [{ role: 'user', content: `call ${i}` }],
          max_completion_tokens: 20,
        });
        if (!reply.choices[0]?.message) throw new Error(`${name}: no reply`);
        if (i >= warmup) samples[name]?.push(msSince(start));
      }
    }
  } finally {
    await fake.close();
  }
  const base = summarize(samples['global fetch (no policy)'] ?? []);
  const lines = [
    '# The outbound client on an LLM call',
    '',
    `${new Date().toISOString()} · ${os.cpus().length} cores, load average ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')} · ${calls} interleaved calls after ${warmup} warm-up · \`npx tsx bench/outbound.ts\``,
    '',
    '| client | p50 ms | p95 ms | p50 − global fetch |',
    '|---|---|---|---|',
    ...Object.entries(samples).map(([name, xs]) => {
      const s = summarize(xs);
      return `| ${name} | ${round(s.p50, 2)} | ${round(s.p95, 2)} | ${round(s.p50 - base.p50, 2)} |`;
    }),
    '',
    'One chat completion through the OpenAI SDK to the local fake provider on loopback (so the network adds almost nothing and the client is most of what is measured). The policy check is a lookup per new connection; with keep-alive most calls reuse one.',
  ];
  const text = `${lines.join('\n')}\n`;
  writeFileSync(path.join(REPO_ROOT, 'bench', 'results', 'outbound-latest.md'), text);
  process.stdout.write(text);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});

// Webhook benchmark: a signed webhook request (GitHub-style HMAC and delivery id) → its run
// COMPLETED, beside a client's POST /wf/{id}/start_run/ → COMPLETED and a client's blocking
// POST /wf/{id}/run/ (answered with the outputs once the run completed), for the same 5-node pure
// run on the same stack, taking turns so all three see the same load. The hook and start_run poll
// /run/{id}/status/ back to back, so their difference is what the hook adds: the trigger lookup, the
// fleet-wide rate count, the HMAC, the mapping and the delivery's idempotency record; the blocking
// run is the plain `run` call a client makes when it wants the result in one request.
// Usage: npx tsx bench/webhook.ts [runs of each] (bench/results/webhook-latest.md)
import { createHmac } from 'node:crypto';
import http from 'node:http';
import os from 'node:os';
import { jsonClient, type JsonClient } from './lib/http';
import { saveResults } from './lib/report';
import { SCENARIOS } from './lib/scenarios';
import { runWithStack } from './lib/stack';
import { median, percentileOf } from './lib/stats';

const SECRET = 'bench-webhook-secret';
const scenario = SCENARIOS.pure;

/** POSTs exact bytes with headers over a keep-alive agent: the signature is over these bytes. */
function hookPoster(origin: string) {
  const base = new URL(origin);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
  return {
    post(path: string, body: Buffer, headers: Record<string, string>): Promise<{ status: number; text: string }> {
      return new Promise((resolve, reject) => {
        const req = http.request(
          {
            agent,
            host: base.hostname,
            port: base.port,
            method: 'POST',
            path,
            headers: { 'content-type': 'application/json', 'content-length': body.length, ...headers },
          },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('error', reject);
            res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
          },
        );
        req.on('error', reject);
        req.end(body);
      });
    },
    close: () => agent.destroy(),
  };
}

async function untilCompleted(api: JsonClient, runId: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const { body } = await api.get(`/run/${runId}/status/`);
    const status = (body as { status: string }).status;
    if (status === 'COMPLETED') return;
    if (['FAILED', 'CANCELED'].includes(status)) throw new Error(`run ${runId} ended ${status}`);
    if (Date.now() > deadline) throw new Error(`run ${runId} still ${status}`);
  }
}

runWithStack('spur-bench-webhook-', async (stack) => {
  const runs = Number(process.argv[2] ?? 100);
  const warmup = 10;
  const api = jsonClient(stack.apiUrl);
  const hooks = hookPoster(new URL(stack.apiUrl).origin);
  const wf = (await api.post('/wf/', { name: 'webhook bench', definition: scenario })).body as { id: string };
  const trigger = (
    await api.post(`/wf/${wf.id}/triggers/`, {
      name: 'bench',
      input_mapping: { text: '/pull_request/title' },
      signature: { header: 'X-Hub-Signature-256', algorithm: 'hmac-sha256', prefix: 'sha256=' },
      secret: SECRET,
      dedupe_header: 'X-GitHub-Delivery',
      rate_per_second: 1000,
    })
  ).body as { id: string; url: string };

  let n = 0;
  async function viaHook(): Promise<number> {
    const text = `hook ${++n}`;
    const body = Buffer.from(JSON.stringify({ action: 'opened', pull_request: { title: text } }));
    const signature = `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`;
    const t0 = performance.now();
    const res = await hooks.post(trigger.url, body, {
      'X-Hub-Signature-256': signature,
      'X-GitHub-Delivery': `bench-${process.pid}-${n}`,
    });
    if (res.status !== 202) throw new Error(`hook: ${res.status} ${res.text}`);
    await untilCompleted(api, (JSON.parse(res.text) as { run_id: string }).run_id);
    return performance.now() - t0;
  }
  async function viaStartRun(): Promise<number> {
    const t0 = performance.now();
    const res = await api.post(`/wf/${wf.id}/start_run/`, { initial_inputs: { in: { text: `start ${++n}` } } });
    if (res.status !== 200) throw new Error(`start_run: ${res.status} ${JSON.stringify(res.body)}`);
    await untilCompleted(api, (res.body as { id: string }).id);
    return performance.now() - t0;
  }

  async function viaRun(): Promise<number> {
    const t0 = performance.now();
    const res = await api.post(`/wf/${wf.id}/run/`, { initial_inputs: { in: { text: `run ${++n}` } } });
    // Past the blocking wait the answer is 202 and the run goes on: it is timed to COMPLETED as the others.
    if (res.status === 202) await untilCompleted(api, (res.body as { run_id: string }).run_id);
    else if (res.status !== 200) throw new Error(`run: ${res.status} ${JSON.stringify(res.body)}`);
    return performance.now() - t0;
  }

  const ways = [viaHook, viaStartRun, viaRun];
  for (let i = 0; i < warmup; i++) for (const way of ways) await way();
  const times = new Map<(typeof ways)[number], number[]>(ways.map((way) => [way, []]));
  for (let i = 0; i < runs; i++) {
    // Taking turns at going first, so none always follows the same other's run.
    for (let k = 0; k < ways.length; k++) {
      const way = ways[(i + k) % ways.length] as (typeof ways)[number];
      times.get(way)?.push(await way());
    }
  }
  const hook = times.get(viaHook) ?? [];
  const start = times.get(viaStartRun) ?? [];
  const blocking = times.get(viaRun) ?? [];
  const fmt = (xs: number[]) =>
    `p50 ${median(xs).toFixed(1)} ms, p90 ${percentileOf(xs, 90).toFixed(1)} ms, p99 ${percentileOf(xs, 99).toFixed(1)} ms`;
  saveResults('webhook-latest.md', [
    `# Webhook benchmark — ${new Date().toISOString()}`,
    '',
    `${runs} runs of each (after ${warmup} warm-up runs of each), one at a time, taking turns, of "${scenario.label}" on one stack`,
    '(api and worker processes, Temporal dev server, FerretDB), each timed from the request to the run read as COMPLETED',
    'by polling /run/{id}/status/ back to back, or (the blocking run) to its answer with the outputs.',
    '',
    `- signed webhook (HMAC-SHA256 over the body, X-GitHub-Delivery, input mapping) → COMPLETED: ${fmt(hook)}`,
    `- POST /wf/{id}/start_run/ → COMPLETED: ${fmt(start)}`,
    `- POST /wf/{id}/run/ (blocking) → answered with the outputs: ${fmt(blocking)}`,
    `- median ratio webhook / start_run: ${(median(hook) / median(start)).toFixed(2)}; median difference ${(median(hook) - median(start)).toFixed(1)} ms`,
    `- median ratio webhook / blocking run: ${(median(hook) / median(blocking)).toFixed(2)}; median difference ${(median(hook) - median(blocking)).toFixed(1)} ms`,
    `- load average at the end: ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')} on ${os.cpus().length} CPUs`,
  ]);
  hooks.close();
  api.close();
});

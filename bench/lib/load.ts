// Load generators: blocking runs (`POST /wf/{id}/run/`) one at a time, round-robin over several
// workflows, or from N concurrent clients sharing a keep-alive pool. A run counts as failed unless
// it answers 200 with its input echoed by the last node.
import { type CpuSample, type CpuSampler, accumulate } from './cpu';
import type { JsonClient } from './http';
import { type Scenario, echoes, runBody } from './scenarios';
import { msSince } from './stats';

export interface Target {
  scenario: Scenario;
  workflowId: string;
}

export interface LoadResult {
  latenciesMs: number[];
  failures: number;
  /** The first few failures, for the report. */
  failureSamples: string[];
  wallSeconds: number;
  cpu: CpuSample;
}

const emptyResult = (): LoadResult => ({ latenciesMs: [], failures: 0, failureSamples: [], wallSeconds: 0, cpu: {} });

async function oneRun(http: JsonClient, target: Target, seq: number): Promise<{ ms: number; error: string | null }> {
  const text = `bench-${seq}`;
  const started = process.hrtime.bigint();
  try {
    const res = await http.post(`/wf/${target.workflowId}/run/?run_type=blocking`, runBody(text));
    const ms = msSince(started);
    if (res.status !== 200) return { ms, error: `HTTP ${res.status}: ${JSON.stringify(res.body).slice(0, 300)}` };
    if (!echoes(target.scenario, res.body, text))
      return { ms, error: `wrong outputs: ${JSON.stringify(res.body).slice(0, 300)}` };
    return { ms, error: null };
  } catch (err) {
    return { ms: msSince(started), error: `request failed: ${(err as Error).message}` };
  }
}

function record(result: LoadResult, outcome: { ms: number; error: string | null }): void {
  result.latenciesMs.push(outcome.ms);
  if (outcome.error === null) return;
  result.failures++;
  if (result.failureSamples.length < 5) result.failureSamples.push(outcome.error);
}

/** One kind of sequential run: an engine scenario over HTTP, or an in-process baseline. */
export interface Step {
  name: string;
  /** Runs only every `every`-th round (slow baselines); default 1. */
  every?: number;
  once(seq: number): Promise<{ ms: number; error: string | null }>;
}

export function engineStep(name: string, http: JsonClient, target: Target): Step {
  return { name, once: (seq) => oneRun(http, target, seq) };
}

export function inProcessStep(name: string, body: () => Promise<unknown>, every = 1): Step {
  return {
    name,
    every,
    async once() {
      const started = process.hrtime.bigint();
      try {
        await body();
        return { ms: msSince(started), error: null };
      } catch (err) {
        return { ms: msSince(started), error: (err as Error).message };
      }
    },
  };
}

/**
 * Sequential latency: rounds over the steps in turn (1-node, A, B, baselines, 1-node, …), so every
 * step sees the same database size and the same background noise. Stops after `rounds` or
 * `maxSeconds`. CPU is sampled around every run and credited to that run's step.
 */
export async function runInterleaved(
  steps: Step[],
  rounds: number,
  maxSeconds: number,
  sampler: CpuSampler,
): Promise<{ results: LoadResult[]; rounds: number; capped: boolean }> {
  const results = steps.map(emptyResult);
  const started = process.hrtime.bigint();
  let round = 0;
  for (; round < rounds; round++) {
    if (msSince(started) / 1000 > maxSeconds) break;
    for (const [i, step] of steps.entries()) {
      if (round % (step.every ?? 1) !== 0) continue;
      const result = results[i] as LoadResult;
      const before = sampler.sample();
      const outcome = await step.once(round);
      accumulate(result.cpu, before, sampler.sample());
      result.wallSeconds += outcome.ms / 1000;
      record(result, outcome);
    }
  }
  return { results, rounds: round, capped: round < rounds };
}

/**
 * Throughput: `concurrency` clients, each issuing its next run when the previous one answers,
 * until `total` runs were issued or `maxSeconds` passed (runs in flight then still finish).
 */
export async function runConcurrent(
  http: JsonClient,
  target: Target,
  total: number,
  concurrency: number,
  maxSeconds: number,
  sampler?: CpuSampler,
): Promise<LoadResult & { capped: boolean }> {
  const result = emptyResult();
  let next = 0;
  let capped = false;
  const started = process.hrtime.bigint();
  const before = sampler?.sample();
  const client = async () => {
    while (next < total) {
      if (msSince(started) / 1000 > maxSeconds) {
        capped = true;
        return;
      }
      record(result, await oneRun(http, target, next++));
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, total) }, client));
  result.wallSeconds = msSince(started) / 1000;
  if (sampler && before) accumulate(result.cpu, before, sampler.sample());
  return { ...result, capped };
}

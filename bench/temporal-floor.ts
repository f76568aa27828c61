// What Temporal itself costs per workflow on this machine: the floor under any Spur run. A
// Temporal dev server (same options and search attributes as Spur's stacks) and, in this process,
// a worker plus a client over its NativeConnection with eager start (as `npm run dev` runs), run
// the smallest workflows one after another (bench/lib/floor/workflows.ts): bare, one and two local
// activities, and a 5-node Spur run's shape (two local activities and a search-attribute upsert).
// Reports CPU-ms per workflow of the server and of this process (client + worker), and wall p50.
// Usage: npx tsx bench/temporal-floor.ts [runs=300]. Writes bench/results/temporal-floor-latest.md.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { workerClass } from '../temporal/activation-watchdog';
import { freePort } from '../scripts/lib/ports';
import { TEMPORAL_DEV_OPTIONS, startTemporal } from '../scripts/lib/servers';
import { installRuntime } from '../temporal/spur-worker';
import { CpuSampler, accumulate, type CpuSample } from './lib/cpu';
import { saveResults } from './lib/report';
import { msSince, summarize } from './lib/stats';

const RUNS = Number(process.argv[2] ?? 300);
const WARMUP = 30;
/** Each shape with eager start (as `npm run dev` starts runs), and a bare one through the task queue (as a split api does). */
const CASES = [
  ...(['bare', 'oneLocalActivity', 'twoLocalActivities', 'spurShaped'] as const).map((shape) => ({
    shape,
    eager: true,
  })),
  { shape: 'bare', eager: false },
] as const;
const TASK_QUEUE = 'floor';

async function main(): Promise<void> {
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'spur-floor-'));
  const server = await startTemporal({
    ...TEMPORAL_DEV_OPTIONS,
    port: await freePort(),
    dbFile: path.join(tmp, 'temporal.db'),
    logFile: path.join(tmp, 'temporal.log'),
  });
  installRuntime();
  const connection = await NativeConnection.connect({ address: server.address });
  // Spur's own Worker class: the floor's workflow code runs as Spur's does.
  const worker = await workerClass(undefined).create({
    connection,
    taskQueue: TASK_QUEUE,
    workflowsPath: require.resolve('./lib/floor/workflows'),
    activities: { noop: async () => undefined },
  });
  const running = worker.run();
  const client = new Client({ connection });
  const lines: string[] = [];
  try {
    const once = async (shape: string, eager: boolean, i: number) => {
      const t0 = process.hrtime.bigint();
      await client.workflow.execute(shape, {
        taskQueue: TASK_QUEUE,
        workflowId: `${shape}-${eager}-${i}`,
        requestEagerStart: eager,
      });
      return msSince(t0);
    };
    lines.push(
      `# Temporal's floor — ${new Date().toISOString()}`,
      '',
      `${RUNS} sequential workflows of each shape after ${WARMUP} warm-up ones; eager start over the worker's connection; load average ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}.`,
      '',
    );
    lines.push(
      '| workflow | server CPU-ms | client + worker CPU-ms | total CPU-ms | p50 ms |',
      '| --- | ---: | ---: | ---: | ---: |',
    );
    for (const { shape, eager } of CASES) {
      for (let i = 0; i < WARMUP; i++) await once(shape, eager, -1 - i);
      const sampler = new CpuSampler({ temporal: server.handle.pid });
      const before = sampler.sample();
      const wall: number[] = [];
      for (let i = 0; i < RUNS; i++) wall.push(await once(shape, eager, i));
      const used: CpuSample = {};
      accumulate(used, before, sampler.sample());
      const per = (s: number | undefined) => (1000 * (s ?? 0)) / RUNS;
      lines.push(
        `| ${shape}${eager ? '' : ' (no eager start: through the task queue)'} | ${per(used.temporal).toFixed(1)} | ${per(used.bench).toFixed(1)} | ${(per(used.temporal) + per(used.bench)).toFixed(1)} | ${summarize(wall).p50.toFixed(1)} |`,
      );
    }
    saveResults('temporal-floor-latest.md', lines);
  } finally {
    worker.shutdown();
    await running.catch(() => undefined);
    await connection.close();
    await server.handle.stop();
    rmSync(tmp, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});

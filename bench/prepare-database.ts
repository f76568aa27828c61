// What a process's start costs before its first request or task: preparing its database, every
// collection and index in place and an installation from before workspaces moved (prepareDatabase).
// Each build prepares fresh databases (an installation's first start, each test's api) and one
// prepared already (a worker starting, an api restarting), in a child process of its own whose CPU
// is read around each preparation, against one FerretDB behind a counting proxy: CPU-ms of the
// process and of FerretDB, round trips and connections opened (each a handshake) per preparation.
// BENCH_BASELINE=<commit> measures that commit's code too, in blocks taking turns with this tree's.
// Writes bench/results/prepare-database-latest.md. Usage: npx tsx bench/prepare-database.ts
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { onFreePort } from '../scripts/lib/ports';
import { clockTicks, readStat } from '../scripts/lib/proc-stat';
import { startFerretDb } from '../scripts/lib/servers';
import { REPO_ROOT } from '../scripts/lib/tools';
import { checkOutBaseline, type BaselineTree } from './lib/baseline-tree';
import { intEnv } from './lib/env';
import { startMongoCounter } from './lib/mongo-counter';
import { saveResults } from './lib/report';
import { median, round } from './lib/stats';

const ROUNDS = intEnv('BENCH_ROUNDS', 8, 1);
const PER_BLOCK = intEnv('BENCH_PER_BLOCK', 4, 1);
const MODES = ['fresh', 'prepared'] as const;
type Mode = (typeof MODES)[number];

interface Build {
  name: string;
  child: ChildProcessWithoutNullStreams;
  answers: AsyncIterator<string>;
}

interface Block {
  processMs: number;
  ferretMs: number;
  roundTrips: number;
  connections: number;
  wallMs: number;
}

const cpuMs = (pid: number) => {
  const stat = readStat(pid);
  if (!stat) throw new Error(`process ${pid} is gone`);
  return (stat.ticks * 1000) / clockTicks();
};

async function startBuild(name: string, root: string, uri: string): Promise<Build> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(REPO_ROOT, 'bench/lib/prepare-child.ts'), root], {
    cwd: root,
    env: { ...process.env, SPUR_BENCH_MONGODB_URI: uri },
  });
  child.stderr.pipe(process.stderr);
  const answers = readline.createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const first = await answers.next();
  if (first.value !== 'ready') throw new Error(`${name}: the child said ${JSON.stringify(first.value)}`);
  return { name, child, answers };
}

async function prepare(build: Build, dbName: string): Promise<void> {
  build.child.stdin.write(`${dbName}\n`);
  const answer = await build.answers.next();
  if (answer.value !== `done ${dbName}`) throw new Error(`${build.name}: ${JSON.stringify(answer.value)}`);
}

async function main(): Promise<void> {
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'spur-prepare-bench-'));
  const ferret = await onFreePort((port) =>
    startFerretDb({ port, dataDir: path.join(tmp, 'ferretdb'), logFile: path.join(tmp, 'ferretdb.log') }),
  );
  const counter = await startMongoCounter({ host: '127.0.0.1', port: Number(new URL(ferret.uri).port) });
  let baseline: BaselineTree | undefined;
  const builds: Build[] = [];
  try {
    builds.push(await startBuild('this tree', REPO_ROOT, counter.uri));
    if (process.env.BENCH_BASELINE) {
      baseline = checkOutBaseline(process.env.BENCH_BASELINE);
      builds.push(await startBuild(`baseline ${baseline.commit}`, baseline.root, counter.uri));
    }
    const blocks = new Map<string, Block[]>();
    let fresh = 0;
    // One warm-up block each: module loading and the first connection are not a preparation's.
    for (let round = 0; round <= ROUNDS; round++) {
      for (const [b, build] of builds.entries()) {
        for (const mode of MODES) {
          const names = Array.from({ length: PER_BLOCK }, () =>
            mode === 'fresh' ? `bench_fresh_${fresh++}` : `bench_prepared_${b}`,
          );
          if (mode === 'prepared' && round === 0) await prepare(build, names[0] as string);
          counter.reset();
          const [process0, ferret0, wall0] = [cpuMs(build.child.pid as number), cpuMs(ferret.handle.pid), Date.now()];
          for (const name of names) await prepare(build, name);
          const counts = counter.counts();
          const block: Block = {
            processMs: (cpuMs(build.child.pid as number) - process0) / PER_BLOCK,
            ferretMs: (cpuMs(ferret.handle.pid) - ferret0) / PER_BLOCK,
            roundTrips: Object.values(counts).reduce((sum, n) => sum + n, 0) / PER_BLOCK,
            connections: (counts.op2004 ?? 0) / PER_BLOCK,
            wallMs: (Date.now() - wall0) / PER_BLOCK,
          };
          const key = `${build.name}|${mode}`;
          if (round > 0) blocks.set(key, [...(blocks.get(key) ?? []), block]);
        }
      }
    }
    report(builds, blocks);
  } finally {
    for (const build of builds) build.child.kill();
    await counter.close();
    await ferret.handle.stop();
    baseline?.remove();
    rmSync(tmp, { recursive: true, force: true });
  }
}

function report(builds: Build[], blocks: Map<string, Block[]>): void {
  const figure = (key: string, pick: (b: Block) => number) => median((blocks.get(key) ?? []).map(pick));
  const rows = builds.flatMap((build) =>
    MODES.map((mode: Mode) => {
      const key = `${build.name}|${mode}`;
      const [processMs, ferretMs] = [figure(key, (b) => b.processMs), figure(key, (b) => b.ferretMs)];
      return `| ${build.name} | ${mode} | ${round(processMs, 1)} | ${round(ferretMs, 1)} | **${round(processMs + ferretMs, 1)}** | ${round(
        figure(key, (b) => b.roundTrips),
        1,
      )} | ${round(
        figure(key, (b) => b.connections),
        1,
      )} | ${round(
        figure(key, (b) => b.wallMs),
        1,
      )} |`;
    }),
  );
  const ratios =
    builds.length < 2
      ? []
      : MODES.map((mode) => {
          const total = (name: string) =>
            figure(`${name}|${mode}`, (b) => b.processMs) + figure(`${name}|${mode}`, (b) => b.ferretMs);
          return `- ${mode}: CPU-ms ×${round(total(builds[0]!.name) / total(builds[1]!.name), 2)} of ${builds[1]!.name}`;
        });
  saveResults('prepare-database-latest.md', [
    `# Preparing a database at a process's start — ${new Date().toISOString()}`,
    '',
    `${ROUNDS} rounds after a warm-up, each a block of ${PER_BLOCK} preparations per build and kind, builds taking turns; medians over rounds of each block's figure per preparation. CPU-ms from /proc: the preparing process's and FerretDB's (SQLite). Load average at the end ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}.`,
    '',
    '| build | database | process CPU-ms | FerretDB CPU-ms | **total CPU-ms** | round trips | connections opened | wall ms |',
    '| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...rows,
    ...(ratios.length ? ['', ...ratios] : []),
  ]);
}

void main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);

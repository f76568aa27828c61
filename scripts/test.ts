// `npm test`: real Temporal and FerretDB on free loopback ports with fresh data, the mocha suite
// against them, and everything stopped again, also when the suite fails or is interrupted.
import { spawn } from 'node:child_process';
import { createWriteStream, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { onFreePort } from './lib/ports';
import {
  TEMPORAL_DEV_OPTIONS,
  startFerretDb,
  startTemporal,
  type FerretDbServer,
  type TemporalServer,
} from './lib/servers';
import { REPO_ROOT } from './lib/tools';
import { buildWorkflowBundle } from './build-bundle';
import { buildDist } from './build';
import { cpuSecondsOf, describeCosts } from './lib/file-costs';
import { describeNotRun, probeHost, splitRunnable, type NotRun } from './lib/privileged-tests';

async function main(): Promise<number> {
  const started = Date.now();
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'spur-test-'));
  let ferret: FerretDbServer | undefined;
  let temporal: TemporalServer | undefined;
  let code = 1;
  // The files this host cannot run (root, OS packages) are left out and named last, never passed unrun.
  const { args, files } = mochaArgs(process.argv.slice(2));
  const { run, notRun } = splitRunnable(files, probeHost());
  const stopAll = async () => {
    await Promise.allSettled([ferret?.handle.stop(), temporal?.handle.stop()]);
  };
  process.once('SIGINT', () => void stopAll().then(() => process.exit(130)));
  process.once('SIGTERM', () => void stopAll().then(() => process.exit(143)));
  try {
    [ferret, temporal] = await Promise.all([
      onFreePort((port) =>
        startFerretDb({ port, dataDir: path.join(tmp, 'ferretdb'), logFile: path.join(tmp, 'ferretdb.log') }),
      ),
      onFreePort((port) =>
        startTemporal({
          ...TEMPORAL_DEV_OPTIONS,
          port,
          uiPort: null,
          dbFile: path.join(tmp, 'temporal.db'),
          logFile: path.join(tmp, 'temporal.log'),
        }),
      ),
    ]);
    console.log(
      `test stack: FerretDB ${ferret.uri}, Temporal ${temporal.address} (${((Date.now() - started) / 1000).toFixed(1)} s to start)`,
    );
    // Type check and lint run beside the suite, whose files spend much of their time waiting
    // (kills, restarts, backoff), at the lowest priority: they take idle CPU, never the CPU a
    // starting api or worker needs in time. The run fails at the end if they did.
    const checked = process.env.SPUR_TEST_SKIP_STATIC === '1' ? Promise.resolve(true) : staticChecks(started);
    // One bundle for every worker the suite starts: workers come up in a second, not five.
    const bundle = await buildWorkflowBundle(path.join(tmp, 'workflow-bundle.js'));
    // The api and worker processes the suite starts run compiled JavaScript, as the image does.
    const dist = await buildDist();
    console.log(`suite starts ${((Date.now() - started) / 1000).toFixed(1)} s into the run`);
    const suite = await runMocha(
      args,
      run,
      {
        SPUR_TEST_WORKFLOW_BUNDLE: bundle,
        SPUR_TEST_DIST: dist,
        SPUR_TEST_MONGODB_URI: ferret.uri,
        SPUR_TEST_TEMPORAL_ADDRESS: temporal.address,
        SPUR_TEST_TMP: tmp,
      },
      path.join(tmp, 'mocha.log'),
    );
    console.log(`suite ended ${((Date.now() - started) / 1000).toFixed(1)} s into the run`);
    for (const line of describeCosts(tmp)) console.log(line);
    const serverCpu = (pid: number) => cpuSecondsOf(pid).own.toFixed(0);
    console.log(
      `servers: Temporal ${serverCpu(temporal.handle.pid)} CPU-s, FerretDB ${serverCpu(ferret.handle.pid)} CPU-s`,
    );
    const staticOk = await checked;
    if (!staticOk) console.error('static checks failed (tsc or eslint, output above): the run fails');
    code = suite !== 0 ? suite : staticOk ? 0 : 1;
  } catch (err) {
    console.error('test stack failed:', err);
    for (const log of ['ferretdb.log', 'temporal.log']) printTail(path.join(tmp, log));
  } finally {
    await stopAll();
    // SPUR_TEST_KEEP_LOGS=1 keeps them after a passing run too, e.g. to compare with a failed one.
    if (code === 0 && process.env.SPUR_TEST_KEEP_LOGS !== '1') rmSync(tmp, { recursive: true, force: true });
    else console.error(`server logs and mocha.log kept in ${tmp}`);
    console.log(`test run took ${((Date.now() - started) / 1000).toFixed(1)} s`);
    printNotRun(notRun);
  }
  return code;
}

/** Type check and lint (workflow determinism, floating promises) over one program: scripts/static-checks.ts. */
function staticChecks(started: number): Promise<boolean> {
  const tsx = path.join(REPO_ROOT, 'node_modules', '.bin', 'tsx');
  return new Promise<boolean>((resolve) =>
    spawn('nice', ['-n', '19', tsx, path.join(REPO_ROOT, 'scripts', 'static-checks.ts')], {
      cwd: REPO_ROOT,
      stdio: 'inherit',
    }).on('exit', (c) => {
      // When they ended: after the suite, they are what the run waited for last.
      console.log(`static checks ended ${((Date.now() - started) / 1000).toFixed(1)} s into the run`);
      resolve(c === 0);
    }),
  );
}

/**
 * The files that took a minute or more in a full run on 2 cores, longest first: with files in
 * parallel, one of them starting late would be the run's tail, while short ones fill the gaps at
 * the end. (The cluster file first: its start is the CPU-heaviest moment of the suite.)
 */
const LONG_FIRST = [
  'test/cluster/host-loss.test.ts',
  'test/e2e/large-values.test.ts',
  'test/e2e/outages.test.ts',
  'test/e2e/batch.test.ts',
  'test/e2e/projection-rejected.test.ts',
  'test/security/templates.test.ts',
  'test/api/fuzz.test.ts',
  'test/e2e/durability.test.ts',
  'test/e2e/idempotency.test.ts',
  'test/e2e/rag-durability.test.ts',
  'test/e2e/rerun.test.ts',
  'test/e2e/integrations.test.ts',
  'test/e2e/reconciler-cases.test.ts',
  'test/e2e/llm-limits.test.ts',
  'test/e2e/schedules.test.ts',
  'test/e2e/sigterm.test.ts',
  'test/e2e/pauses-durability.test.ts',
];

/** The folders of the suite, in the order their other files run. */
// The security and api files before the browser ones, as document-bombs is among the longer ones.
const SUITE_FOLDERS = [
  'test/cluster',
  'test/e2e',
  'test/security',
  'test/api',
  'test/browser',
  'test/deploy',
  'test/unit',
];

/**
 * The whole suite as a list of files, each once (mocha would run a file matched twice twice): the
 * long files, then every other `*.test.ts` of the folders, in name order.
 */
function suiteFiles(): string[] {
  const long = LONG_FIRST.filter((file) => existsSync(path.join(REPO_ROOT, file)));
  const rest = SUITE_FOLDERS.flatMap((folder) =>
    readdirSync(path.join(REPO_ROOT, folder), { recursive: true, encoding: 'utf8' })
      .filter((name) => name.endsWith('.test.ts'))
      .sort()
      .map((name) => path.join(folder, name)),
  ).filter((file) => !long.includes(file));
  return [...long, ...rest];
}

/**
 * Files run in parallel mocha workers (SPUR_TEST_JOBS, default 6): every file starts its own api
 * with a fresh database, task queue and workflow-id prefix, and the suites that kill servers start
 * their own, so files never share state. Much of an e2e file is waiting (kill -9 and restart,
 * retry backoff, a paused run), which the other files fill. The files: those named, else the suite.
 */
function mochaArgs(argv: string[]): { args: string[]; files: string[] } {
  const isFile = (a: string) => !a.startsWith('-') && a.endsWith('.ts');
  const named = argv.filter(isFile);
  // Six, on a 2-core host: 543 s against 592 s with four (the same suite, one run each); with four
  // the cores were idle 15% of the time, while every file was waiting at once.
  const jobs = Number(process.env.SPUR_TEST_JOBS ?? 6);
  const parallel = Number.isInteger(jobs) && jobs > 1 ? ['--parallel', '--jobs', String(jobs)] : [];
  return {
    args: [...parallel, ...argv.filter((a) => !isFile(a))],
    files: named.length > 0 ? named : suiteFiles(),
  };
}

/** Last, after every other line, so that a contributor sees what this run did not cover. */
function printNotRun(notRun: readonly NotRun[]): void {
  for (const line of describeNotRun(notRun)) console.log(line);
}

/**
 * Mocha's output goes to the terminal and to `mocha.log` beside the server logs, which a failed run
 * keeps: a CI system that shows only part of the output still leaves the whole report on disk.
 */
function runMocha(args: string[], files: string[], env: Record<string, string>, logFile: string): Promise<number> {
  // Every named file needs what this host lacks: nothing to run (the last lines say why).
  if (files.length === 0) return Promise.resolve(0);
  const mocha = path.join(REPO_ROOT, 'node_modules', '.bin', 'mocha');
  const log = createWriteStream(logFile);
  const child = spawn(mocha, [...args, ...files], {
    cwd: REPO_ROOT,
    stdio: ['inherit', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  child.stdout.on('data', (chunk: Buffer) => {
    process.stdout.write(chunk);
    log.write(chunk);
  });
  child.stderr.on('data', (chunk: Buffer) => {
    process.stderr.write(chunk);
    log.write(chunk);
  });
  const exited = new Promise<number>((resolve) => child.on('close', (c, signal) => resolve(c ?? (signal ? 1 : 0))));
  return exited.then((code) => new Promise((resolve) => log.end(() => resolve(code))));
}

function printTail(file: string): void {
  try {
    const lines = readFileSync(file, 'utf8').trim().split('\n');
    console.error(`--- last lines of ${file}\n${lines.slice(-20).join('\n')}`);
  } catch {
    // the server never got far enough to write a log
  }
}

void main().then((code) => process.exit(code));

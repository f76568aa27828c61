import { readFileSync } from 'node:fs';
import path from 'node:path';
import { distEntry } from '../../scripts/build';
import { type ManagedProcess, spawnManaged } from '../../scripts/lib/processes';
import { REPO_ROOT } from '../../scripts/lib/tools';
import { runtimeForOthers } from './runtime-for-others';
import { entryArgs, stack } from './stack';

export interface TestWorker {
  process: ManagedProcess;
  logFile: string;
  stop(): Promise<void>;
}

let counter = 0;
const START_WITHIN_MS = 90_000;

/** Who runs the worker, and the files it runs: the clone's own unless given. */
interface WorkerRunAs {
  user: { uid: number; gid: number };
  /** The folder the worker starts in and the compiled entry it runs. */
  cwd: string;
  args: string[];
}

/**
 * A real worker process (src/processes/worker.ts) for the given api's database and task queue, using
 * the bundle the harness prebuilt. Crash tests kill it with `process.kill('SIGKILL')`.
 */
export async function startWorker(
  env: Record<string, string>,
  extraEnv: Record<string, string> = {},
  runAs?: WorkerRunAs,
): Promise<TestWorker> {
  const logFile = path.join(stack.tmpDir, `worker-${process.pid}-${++counter}.log`);
  const child = spawnManaged({
    name: 'worker',
    command: process.execPath,
    // As the image runs it (Dockerfile): one process, so a SIGTERM to the pid reaches the app itself.
    args: runAs?.args ?? entryArgs('src/processes/worker.ts'),
    env: { ...env, SPUR_LOG_LEVEL: 'info', SPUR_WORKFLOW_BUNDLE: stack.workflowBundle, ...extraEnv },
    cwd: runAs?.cwd ?? REPO_ROOT,
    logFile,
    user: runAs?.user,
  });
  // A readiness wait, not a speed check: a start costs about 2 CPU-s, which six test files at once
  // on two cores (each with its own processes, beside the servers) have stretched past 30 s.
  const deadline = Date.now() + START_WITHIN_MS;
  while (!readLog(logFile).includes('worker running')) {
    if (!child.running) throw new Error(`worker exited during start:\n${readLog(logFile).slice(-3000)}`);
    if (Date.now() > deadline)
      throw new Error(`worker did not start in ${START_WITHIN_MS / 1000} s:\n${readLog(logFile).slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return { process: child, logFile, stop: () => child.stop('SIGTERM', 15_000) };
}

/**
 * A worker running as uid 65534 (nobody), as production's image runs it. It loads a copy of the
 * compiled files and the bundle in a folder of its own (test/support/runtime-for-others.ts), so the
 * clone may sit where other users cannot enter; the copy goes when the worker stops.
 */
export async function startUnprivilegedWorker(
  env: Record<string, string>,
  extraEnv: Record<string, string> = {},
): Promise<TestWorker> {
  const runtime = runtimeForOthers(stack.dist, stack.workflowBundle);
  try {
    const worker = await startWorker(
      env,
      { SPUR_WORKFLOW_BUNDLE: runtime.bundle, HOME: '/tmp', ...extraEnv },
      {
        user: { uid: 65534, gid: 65534 },
        cwd: runtime.dir,
        args: [distEntry('src/processes/worker.ts', runtime.dist)],
      },
    );
    return { ...worker, stop: () => worker.stop().finally(runtime.remove) };
  } catch (err) {
    runtime.remove();
    throw err;
  }
}

function readLog(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

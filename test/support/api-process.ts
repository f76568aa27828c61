import path from 'node:path';
import { freePort, waitForTcp } from '../../scripts/lib/ports';
import { type ManagedProcess, spawnManaged } from '../../scripts/lib/processes';
import { REPO_ROOT } from '../../scripts/lib/tools';
import { client } from './http';
import { entryArgs, stack } from './stack';

export interface ApiProcess {
  process: ManagedProcess;
  baseUrl: string;
  http: ReturnType<typeof client>;
  /** Where its stdout and stderr go. */
  logFile: string;
}

let counter = 0;

/**
 * The api as its own process, for tests that kill it: src/processes/api.ts, or `entry` (e.g.
 * src/processes/combined.ts, the api hosting a worker).
 */
export async function startApiProcess(
  env: Record<string, string>,
  entry = 'src/processes/api.ts',
): Promise<ApiProcess> {
  const port = await freePort();
  const logFile = path.join(stack.tmpDir, `api-${process.pid}-${++counter}.log`);
  const child = spawnManaged({
    name: 'api',
    command: process.execPath,
    // As the image runs it (Dockerfile): one process, so a SIGTERM to the pid reaches the app itself.
    args: entryArgs(entry),
    env: { ...env, SPUR_PORT: String(port), SPUR_HOST: '127.0.0.1', SPUR_LOG_LEVEL: 'warn' },
    cwd: REPO_ROOT,
    logFile,
  });
  await waitForTcp('127.0.0.1', port, 30_000);
  const baseUrl = `http://127.0.0.1:${port}/api`;
  return { process: child, baseUrl, http: client(baseUrl), logFile };
}

import { execFile } from 'node:child_process';
import { REPO_ROOT } from '../../scripts/lib/tools';
import { entryArgs } from './stack';

export interface CommandResult {
  code: number;
  output: string;
}

/** Runs a command to its end (at most `timeoutMs`) and returns its exit code and stdout+stderr. */
export function runCommand(
  file: string,
  args: string[],
  options: { env: Record<string, string>; cwd?: string; timeoutMs?: number },
): Promise<CommandResult> {
  return new Promise((resolve) => {
    execFile(
      file,
      args,
      { env: options.env, cwd: options.cwd ?? REPO_ROOT, timeout: options.timeoutMs ?? 60_000 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
        resolve({ code, output: `${stdout}${stderr}${err?.signal ? `\n(killed by ${err.signal})` : ''}` });
      },
    );
  });
}

/**
 * The worker's health command (src/processes/worker-health.ts) as the image runs it, with a worker's
 * environment (e.g. a test api's `env`) and nothing of this process's but PATH.
 */
export function runWorkerHealth(
  env: Record<string, string>,
  extraEnv: Record<string, string> = {},
): Promise<CommandResult> {
  return runCommand(process.execPath, entryArgs('src/processes/worker-health.ts'), {
    env: { PATH: process.env.PATH ?? '', ...env, ...extraEnv },
  });
}

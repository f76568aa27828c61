import assert from 'node:assert/strict';
import { type CommandResult, runCommand } from '../support/worker-health';

/**
 * Runs a compose `CMD` health check here as Docker runs it in the container: `node` is this test's
 * node, the working directory the repository (the image's /app holds the same tree), and the
 * environment only what is given (plus PATH).
 */
export function runHealthcheck(test: string[], env: Record<string, string>): Promise<CommandResult> {
  const [kind, command, ...args] = test;
  assert.equal(kind, 'CMD');
  assert.equal(command, 'node');
  return runCommand(process.execPath, args, { env: { PATH: process.env.PATH ?? '', ...env }, timeoutMs: 40_000 });
}

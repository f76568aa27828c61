import { NodeExecutionError } from '../errors';

/** The sandbox cannot start here: the code never ran, and the same code may run on a worker that can. */
export class SandboxUnavailableError extends NodeExecutionError {}

/** Names the cause and the setting, so an operator sees why no Python node runs and what to change. */
export function sandboxUnavailable(cause: string): NodeExecutionError {
  return new SandboxUnavailableError(
    `The Python sandbox cannot start (SPUR_PYTHON_SANDBOX=bubblewrap): ${cause}. Python nodes do not run without it; SPUR_PYTHON_SANDBOX=off runs them unsandboxed, for trusted code only.`,
  );
}

import type { ChildProcess } from 'node:child_process';
import { constants } from 'node:os';
import { NodeExecutionError, TransientNodeError } from '../errors.js';
import { type HarnessSpawn, spawnHarness } from './harness-process';
import type { Launch } from './sandbox.js';
import type { Spawner } from './spawner';

export interface PythonRunOptions {
  /** What runs it: PYTHON_HARNESS (the body of `def user_function(input_model):`) unless given. */
  program?: string;
  /** The user's code, as `program` reads it. */
  code: string;
  input: Record<string, unknown>;
  timeoutSeconds: number;
  memoryLimitMb: number;
  signal: AbortSignal;
  heartbeat: () => void;
  /** Cap on everything the child writes; OUTPUT_LIMIT_BYTES by default. */
  outputLimitBytes?: number;
}

/** Default cap on everything the child writes (stdout, stderr and the result together). */
export const OUTPUT_LIMIT_BYTES = 10 * 1024 * 1024;
const HEARTBEAT_MS = 1000;
const STDERR_TAIL_CHARS = 2000;

/** The harness's arguments after the interpreter (`-I`: no PYTHON* variables, no user site). */
export function harnessArgs(
  harness: string,
  options: Pick<PythonRunOptions, 'timeoutSeconds' | 'memoryLimitMb'>,
): string[] {
  return ['-I', '-B', '-c', harness, String(options.timeoutSeconds + 1), String(options.memoryLimitMb)];
}

/**
 * Runs the harness as `launch` says and returns the dict the user's code returned. Failures of the
 * code (exceptions, timeouts, limits, non-dict results) throw NodeExecutionError; an abort of
 * `signal` kills the process and throws the abort reason. `started` may prepare the running
 * process (the opt-in network) before the code runs; its failure kills the process. With a
 * `spawner` and nothing to attach, the spawner's helper starts the process.
 */
export async function runLaunch(
  launch: Launch,
  cwd: string,
  options: PythonRunOptions,
  { started, spawner }: { started?: (child: ChildProcess) => Promise<void>; spawner?: Spawner } = {},
): Promise<Record<string, unknown>> {
  const outcome = await runHarness(launch, cwd, options, started, spawner);
  return interpret(outcome, options);
}

interface Outcome {
  result: string;
  stderrTail: string;
  code: number | null;
  signal: NodeJS.Signals | null;
}

function runHarness(
  launch: Launch,
  cwd: string,
  options: PythonRunOptions,
  started: ((child: ChildProcess) => Promise<void>) | undefined,
  spawner: Spawner | undefined,
): Promise<Outcome> {
  if (options.signal.aborted) throw abortError(options.signal);
  const limit = options.outputLimitBytes ?? OUTPUT_LIMIT_BYTES;
  const request: HarnessSpawn = {
    command: launch.command,
    args: launch.args,
    env: launch.env,
    cwd,
    ...(launch.uid === undefined ? {} : { uid: launch.uid, gid: launch.gid }),
    extraPipes: launch.blockFd === undefined ? 0 : 2,
    stdin: JSON.stringify({ code: options.code, input: options.input }),
  };
  // What attaches to the running process (the opt-in network) needs it here; the rest is spawned
  // by the helper, whose fork is cheaper than this process's (spawner.ts).
  const direct = started !== undefined || spawner === undefined ? spawnHarness(request) : undefined;
  const harness = direct?.harness ?? (spawner as Spawner).spawn(request, limit);

  return new Promise<Outcome>((resolve, reject) => {
    let failure: Error | undefined;
    let settled = false;
    let written = 0;
    const result: Buffer[] = [];
    let stderrTail = '';
    let exit: Pick<Outcome, 'code' | 'signal'> | undefined;

    const settle = () => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearInterval(beat);
      options.signal.removeEventListener('abort', onAbort);
      if (failure) reject(failure);
      // Decoded once at the end: a UTF-8 character may straddle two chunks.
      else
        resolve({
          result: Buffer.concat(result).toString('utf8'),
          stderrTail,
          code: exit?.code ?? null,
          signal: exit?.signal ?? null,
        });
    };
    const fail = (error: Error) => {
      failure ??= error;
      harness.killGroup();
      if (exit) settle();
    };
    const onAbort = () => fail(abortError(options.signal));

    const timer = setTimeout(
      () => fail(new NodeExecutionError(`Python code timed out after ${options.timeoutSeconds}s`)),
      options.timeoutSeconds * 1000,
    );
    const beat = setInterval(() => {
      try {
        options.heartbeat();
      } catch {
        // A failed heartbeat must not crash the worker; cancellation arrives through the signal.
      }
    }, HEARTBEAT_MS);
    options.signal.addEventListener('abort', onAbort, { once: true });

    harness.onOutput((stream, chunk) => {
      written += chunk.length;
      if (written > limit) fail(new NodeExecutionError(`Python output exceeded ${Math.round(limit / 1024 / 1024)} MB`));
      if (stream === 'stderr') stderrTail = (stderrTail + chunk.toString('utf8')).slice(-STDERR_TAIL_CHARS);
      if (stream === 'result' && !failure) result.push(chunk);
    });
    harness.onError((error) => {
      failure ??=
        error instanceof TransientNodeError
          ? error
          : new NodeExecutionError(`Could not start ${launch.command}: ${error.message}`, { cause: error });
      settle();
    });
    harness.onExit((code, signal) => {
      exit = { code, signal: signal ?? sandboxedSignal(launch, code) };
      if (failure) settle();
    });
    harness.onClose(settle);

    if (direct && started)
      started(direct.child).catch((error: unknown) => fail(error instanceof Error ? error : new Error(String(error))));
  });
}

function interpret(outcome: Outcome, options: PythonRunOptions): Record<string, unknown> {
  if (outcome.result === '') {
    if (outcome.signal === 'SIGXCPU' || outcome.signal === 'SIGKILL') {
      throw new NodeExecutionError(`Python code timed out after ${options.timeoutSeconds}s (CPU-time limit)`);
    }
    if (outcome.stderrTail.includes('MemoryError')) {
      throw new NodeExecutionError(`Python code exceeded the memory limit of ${options.memoryLimitMb} MB`);
    }
    const how = outcome.signal ? `signal ${outcome.signal}` : `code ${outcome.code}`;
    throw new NodeExecutionError(`Python process exited with ${how} and no result: ${outcome.stderrTail.trim()}`);
  }
  let message: { ok: boolean; output?: Record<string, unknown>; error?: string };
  try {
    message = JSON.parse(outcome.result) as typeof message;
  } catch (error) {
    // Only user code writing to fd 3 itself can garble the result; retrying would not help.
    throw new NodeExecutionError('Python result could not be read', { cause: error });
  }
  if (!message.ok || !message.output) throw new NodeExecutionError(message.error ?? 'Python code failed');
  return message.output;
}

/** bwrap reports a command killed by signal N as exit code 128 + N. */
function sandboxedSignal(launch: Launch, code: number | null): NodeJS.Signals | null {
  if (!launch.sandboxed || code === null || code <= 128) return null;
  const entry = Object.entries(constants.signals).find(([, n]) => n === code - 128);
  return entry ? (entry[0] as NodeJS.Signals) : null;
}

export function abortError(signal: AbortSignal): Error {
  if (signal.reason instanceof Error) return signal.reason;
  const error = new Error(typeof signal.reason === 'string' ? signal.reason : 'The operation was aborted');
  error.name = 'AbortError';
  return error;
}

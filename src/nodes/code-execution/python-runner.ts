import { execFile, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { NodeExecutionError } from '../errors.js';
import { PYTHON_HARNESS } from './python-harness.js';

export interface PythonRunOptions {
  /** Body of `def user_function(input_model):`. */
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

/**
 * The child's environment: nothing inherited, so no provider keys or SPUR_* settings reach user
 * code. (`-I` makes the interpreter ignore the PYTHON* entries; they matter for the user's own
 * subprocesses.)
 */
const CHILD_ENV = {
  PATH: '/usr/local/bin:/usr/bin:/bin',
  LANG: 'C.UTF-8',
  PYTHONDONTWRITEBYTECODE: '1',
  PYTHONIOENCODING: 'utf-8',
};

let interpreter: Promise<string> | undefined;

/**
 * Absolute path of `python3`, found once with the worker's own PATH and environment (a pyenv
 * shim, say, cannot work in the minimal child environment; the real binary can).
 */
function resolveInterpreter(): Promise<string> {
  interpreter ??= new Promise<string>((resolve, reject) => {
    execFile('python3', ['-c', 'import sys; print(sys.executable)'], { timeout: 15_000 }, (error, stdout) => {
      if (error) reject(new NodeExecutionError(`python3 is not available: ${error.message}`, { cause: error }));
      else resolve(stdout.trim() || 'python3');
    });
  });
  // Do not cache a failure: python3 may be installed later without restarting the worker.
  interpreter.catch(() => (interpreter = undefined));
  return interpreter;
}

/**
 * Runs user code in a fresh `python3` process and returns the dict it returned. Failures of the
 * code (exceptions, timeouts, limits, non-dict results) throw NodeExecutionError; an abort of
 * `signal` kills the process and throws the abort reason.
 */
export async function runPython(options: PythonRunOptions): Promise<Record<string, unknown>> {
  if (options.signal.aborted) throw abortError(options.signal);
  const python = await resolveInterpreter();
  const dir = await mkdtemp(join(tmpdir(), 'spur-py-'));
  try {
    const outcome = await runHarness(python, dir, options);
    return interpret(outcome, options);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

interface Outcome {
  result: string;
  stderrTail: string;
  code: number | null;
  signal: NodeJS.Signals | null;
}

function runHarness(python: string, cwd: string, options: PythonRunOptions): Promise<Outcome> {
  const cpuSeconds = options.timeoutSeconds + 1;
  const args = ['-I', '-S', '-B', '-c', PYTHON_HARNESS, String(cpuSeconds), String(options.memoryLimitMb)];
  if (options.signal.aborted) throw abortError(options.signal);
  // detached: the child leads its own process group, so one kill also takes any processes it forked.
  const child = spawn(python, args, { cwd, env: CHILD_ENV, stdio: ['pipe', 'pipe', 'pipe', 'pipe'], detached: true });

  return new Promise<Outcome>((resolve, reject) => {
    let failure: Error | undefined;
    let settled = false;
    let written = 0;
    const result: Buffer[] = [];
    let stderrTail = '';
    let exit: Pick<Outcome, 'code' | 'signal'> | undefined;

    const killGroup = () => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // ESRCH: the group is already gone.
      }
    };
    const settle = () => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearInterval(beat);
      options.signal.removeEventListener('abort', onAbort);
      if (failure) reject(failure);
      // Decoded once at the end: a UTF-8 character may straddle two chunks.
      else resolve({ result: Buffer.concat(result).toString('utf8'), stderrTail, code: exit?.code ?? null, signal: exit?.signal ?? null });
    };
    const fail = (error: Error) => {
      failure ??= error;
      killGroup();
      if (exit) settle();
    };
    const limit = options.outputLimitBytes ?? OUTPUT_LIMIT_BYTES;
    const count = (chunk: Buffer) => {
      written += chunk.length;
      if (written > limit) fail(new NodeExecutionError(`Python output exceeded ${Math.round(limit / 1024 / 1024)} MB`));
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

    child.stdout.on('data', count);
    child.stderr.on('data', (chunk: Buffer) => {
      count(chunk);
      stderrTail = (stderrTail + chunk.toString('utf8')).slice(-STDERR_TAIL_CHARS);
    });
    const resultStream = child.stdio[3] as Readable;
    resultStream.on('data', (chunk: Buffer) => {
      count(chunk);
      if (!failure) result.push(chunk);
    });
    child.on('error', (error) => {
      failure ??= new NodeExecutionError(`Could not start python3: ${error.message}`, { cause: error });
      settle();
    });
    child.on('exit', (code, signal) => {
      exit = { code, signal };
      // Reap whatever the user's code left running in the group; its pipes then close too.
      killGroup();
      if (failure) settle();
    });
    child.on('close', settle);

    // The child may die before reading its input; that shows up as its exit, not as EPIPE here.
    child.stdin.on('error', () => undefined);
    child.stdin.end(JSON.stringify({ code: options.code, input: options.input }));
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

function abortError(signal: AbortSignal): Error {
  if (signal.reason instanceof Error) return signal.reason;
  const error = new Error(typeof signal.reason === 'string' ? signal.reason : 'The operation was aborted');
  error.name = 'AbortError';
  return error;
}

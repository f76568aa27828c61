// A small supervisor for the dev/test stack. Children run in their own process group so a stop
// reaches grandchildren too (npx -> tsx -> node), and none may outlive this process.
import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import { closeSync, mkdirSync, openSync } from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';

export interface SpawnManagedOptions {
  name: string;
  command: string;
  args?: readonly string[];
  /** Merged over process.env; an `undefined` value removes the variable. */
  env?: Record<string, string | undefined>;
  cwd?: string;
  /** Append stdout+stderr to this file (tests). Takes precedence over prefixOutput. */
  logFile?: string;
  /** Forward output lines to our stdout as `[name] line` (dev). Default: true without logFile. */
  prefixOutput?: boolean;
  /** Run as this user instead of ours (a root harness starting a process as an unprivileged user). */
  user?: { uid: number; gid: number };
}

export interface ManagedProcess {
  readonly name: string;
  readonly pid: number;
  readonly child: ChildProcess;
  /** Exit code of the direct child; null when a signal ended it. */
  readonly exited: Promise<number | null>;
  readonly running: boolean;
  /** Signal the whole group, wait up to graceMs, then SIGKILL it. Safe to call repeatedly. */
  stop(signal?: NodeJS.Signals, graceMs?: number): Promise<void>;
  /** Send a signal to the whole group now (crash tests). */
  kill(signal: NodeJS.Signals): void;
}

const groups = new Set<number>(); // process-group ids that may still have members
const COLOURS = [36, 33, 35, 32, 34, 31];
let colourIndex = 0;

function killGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // ESRCH: the group is already empty
  }
}

let guardsInstalled = false;
function installGuards(): void {
  if (guardsInstalled) return;
  guardsInstalled = true;
  // 'exit' runs on process.exit() and a drained event loop; only synchronous work is possible.
  process.on('exit', () => {
    for (const pgid of groups) killGroup(pgid, 'SIGKILL');
  });
  // A fatal signal skips 'exit'. If nobody else handles it, clean up and re-raise it.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    const onSignal = (): void => {
      if (process.listenerCount(signal) > 1) return; // the host (e.g. dev.ts) shuts down itself
      for (const pgid of groups) killGroup(pgid, 'SIGKILL');
      process.removeListener(signal, onSignal);
      process.kill(process.pid, signal);
    };
    process.on(signal, onSignal);
  }
}

function useColour(): boolean {
  if (process.env.NO_COLOR) return false;
  return Boolean(process.env.FORCE_COLOR) || process.stdout.isTTY === true;
}

function forwardLines(stream: NodeJS.ReadableStream, prefix: string): void {
  const lines = readline.createInterface({ input: stream, crlfDelay: Infinity });
  lines.on('line', (line) => process.stdout.write(`${prefix} ${line}\n`));
}

function delay(ms: number): { promise: Promise<void>; cancel: () => void } {
  let timer: NodeJS.Timeout | undefined;
  const promise = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  return { promise, cancel: () => clearTimeout(timer) };
}

export function spawnManaged(options: SpawnManagedOptions): ManagedProcess {
  installGuards();
  const { name, command, args = [], cwd, logFile } = options;
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const [key, value] of Object.entries(options.env ?? {})) {
    if (value === undefined) delete env[key];
    else env[key] = value;
  }

  // A log file gets the child's fds directly: output keeps flowing even if our event loop is busy.
  let logFd: number | undefined;
  let stdio: StdioOptions = ['ignore', 'inherit', 'inherit'];
  if (logFile) {
    mkdirSync(path.dirname(logFile), { recursive: true });
    logFd = openSync(logFile, 'a');
    stdio = ['ignore', logFd, logFd];
  } else if (options.prefixOutput !== false) {
    stdio = ['ignore', 'pipe', 'pipe'];
  }

  const child = spawn(command, [...args], { cwd, env, stdio, detached: true, ...options.user });
  if (logFd !== undefined) closeSync(logFd);
  // Without a handler an 'error' event (e.g. ENOENT, emitted later) would crash us.
  child.on('error', (err) => process.stderr.write(`[${name}] ${err.message}\n`));
  if (child.pid === undefined) throw new Error(`[${name}] could not start ${command}`);
  const pid = child.pid;
  groups.add(pid);

  if (child.stdout && child.stderr) {
    const label = `[${name}]`.padEnd(10);
    const prefix = useColour() ? `\x1b[${COLOURS[colourIndex++ % COLOURS.length]}m${label}\x1b[0m` : label;
    forwardLines(child.stdout, prefix);
    forwardLines(child.stderr, prefix);
  }

  let running = true;
  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', (code) => {
      running = false;
      resolve(code);
    });
  });

  let stopping: Promise<void> | undefined;
  const stop = (signal: NodeJS.Signals = 'SIGTERM', graceMs = 10_000): Promise<void> => {
    stopping ??= (async () => {
      if (running) {
        killGroup(pid, signal);
        const grace = delay(graceMs);
        const inTime = await Promise.race([exited.then(() => true), grace.promise.then(() => false)]);
        grace.cancel();
        if (!inTime) killGroup(pid, 'SIGKILL');
        await exited;
      }
      killGroup(pid, 'SIGKILL'); // stragglers that outlived the group leader
      groups.delete(pid);
    })();
    return stopping;
  };

  return {
    name,
    pid,
    child,
    exited,
    get running() {
      return running;
    },
    stop,
    kill: (signal) => killGroup(pid, signal),
  };
}

import { spawn, type ChildProcess } from 'node:child_process';
import type { Readable } from 'node:stream';

/** What starts a harness: the launcher's command line and the process it becomes. */
export interface HarnessSpawn {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
  /** Set when spawn must drop from root before the launcher runs. */
  uid?: number;
  gid?: number;
  /** Pipes after fd 3 (the result): bwrap's --info-fd and --block-fd for the opt-in network. */
  extraPipes: number;
  /** Written to the child's stdin, which is then closed. */
  stdin: string;
}

/** The streams a harness writes: stdout, stderr, and fd 3 (its result). */
export type HarnessStream = 'stdout' | 'stderr' | 'result';

/**
 * A running harness, wherever it was spawned (here, or by the spawner helper). Its process leads a
 * group of its own; `exit` comes once that group has been killed (what the code left running goes
 * with it), `close` once every byte it wrote was delivered, `error` when it could not start or its
 * spawner stopped.
 */
export interface HarnessProcess {
  onOutput(listener: (stream: HarnessStream, chunk: Buffer) => void): void;
  onExit(listener: (code: number | null, signal: NodeJS.Signals | null) => void): void;
  onClose(listener: () => void): void;
  onError(listener: (error: Error) => void): void;
  /** SIGKILL to the whole group; nothing once it has exited. */
  killGroup(): void;
}

/**
 * Spawns a harness in this process: detached, so the child leads its own process group. Killing
 * the group kills a sandbox: bwrap's init dies with its parent and takes the whole PID namespace
 * along (setsid() cannot escape that); without a sandbox the group kill takes whatever did not
 * start a session of its own. The ChildProcess is there for what attaches to it (the opt-in
 * network reads and writes its extra pipes).
 */
export function spawnHarness(request: HarnessSpawn): { harness: HarnessProcess; child: ChildProcess } {
  const child = spawn(request.command, request.args, {
    cwd: request.cwd,
    env: request.env,
    stdio: ['pipe', 'pipe', 'pipe', 'pipe', ...Array<'pipe'>(request.extraPipes).fill('pipe')],
    detached: true,
    ...(request.uid === undefined ? {} : { uid: request.uid, gid: request.gid }),
  });
  let exited = false;
  const killGroup = () => {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
    } catch {
      // ESRCH: the group is already gone.
    }
  };
  const harness: HarnessProcess = {
    onOutput(listener) {
      child.stdout?.on('data', (chunk: Buffer) => listener('stdout', chunk));
      child.stderr?.on('data', (chunk: Buffer) => listener('stderr', chunk));
      (child.stdio[3] as Readable).on('data', (chunk: Buffer) => listener('result', chunk));
    },
    onExit(listener) {
      child.on('exit', (code, signal) => listener(code, signal));
    },
    onClose(listener) {
      child.on('close', () => listener());
    },
    onError(listener) {
      child.on('error', listener);
    },
    killGroup() {
      if (!exited) killGroup();
    },
  };
  // Registered first: whatever the user's code left running in the group is reaped before any
  // listener hears of the exit; its pipes then close too.
  child.on('exit', () => {
    killGroup();
    exited = true;
  });
  // The child may die before reading its input; that shows up as its exit, not as EPIPE here.
  child.stdin?.on('error', () => undefined);
  child.stdin?.end(request.stdin);
  return { harness, child };
}

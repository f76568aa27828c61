import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { threadBoot } from '../../threads/thread-boot';
import { TransientNodeError } from '../errors';
import type { HarnessProcess, HarnessSpawn, HarnessStream } from './harness-process';
import type { SpawnerReport, SpawnerRequest } from './spawner-protocol';

type Listeners = {
  output: Array<(stream: HarnessStream, chunk: Buffer) => void>;
  exit: Array<(code: number | null, signal: NodeJS.Signals | null) => void>;
  close: Array<() => void>;
  error: Array<(error: Error) => void>;
};

const SPAWNER_MODULE = path.join(__dirname, `spawner-process${path.extname(__filename)}`);

/**
 * Spawns harnesses through a small helper process of this one. A fork copies the parent's page
 * tables, so its cost grows with the parent's memory: from a worker holding 400 MB a sandbox's
 * spawn took 32.5 CPU-ms, from a ~50 MB helper 14.1 with the relay (docs/performance.md). The
 * helper starts with the first harness and again after it dies (the harnesses it ran then fail
 * with a transient error, so their nodes are retried; their sandboxes die with it: bwrap's
 * --die-with-parent, an unsandboxed harness's PDEATHSIG). It ends when this process does: its IPC
 * channel closes, and it kills every group it started before it exits.
 */
export class Spawner {
  private helper: ChildProcess | undefined;
  private nextId = 1;
  private readonly running = new Map<number, Listeners>();

  spawn(request: HarnessSpawn, outputLimitBytes: number): HarnessProcess {
    const helper = this.started();
    const id = this.nextId++;
    const listeners: Listeners = { output: [], exit: [], close: [], error: [] };
    this.running.set(id, listeners);
    helper.ref();
    helper.channel?.ref();
    this.send(helper, { kind: 'spawn', id, spawn: request, outputLimitBytes });
    let exited = false;
    listeners.exit.push(() => (exited = true));
    return {
      onOutput: (listener) => listeners.output.push(listener),
      onExit: (listener) => listeners.exit.push(listener),
      onClose: (listener) => listeners.close.push(listener),
      onError: (listener) => listeners.error.push(listener),
      killGroup: () => {
        if (!exited && this.running.has(id)) this.send(helper, { kind: 'kill', id });
      },
    };
  }

  /** The helper's pid while it runs (tests find the harnesses among its children). */
  get helperPid(): number | undefined {
    return this.helper?.pid;
  }

  private started(): ChildProcess {
    if (this.helper) return this.helper;
    // Not detached: it shares the worker's process group and session, as a thread would.
    const helper = spawn(process.execPath, ['-e', threadBoot(SPAWNER_MODULE)], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      serialization: 'advanced',
    });
    helper.on('message', (report: SpawnerReport) => this.receive(report));
    helper.on('exit', (code, signal) => this.stopped(helper, `exited with ${signal ?? `code ${code}`}`));
    helper.on('error', (error) => this.stopped(helper, error.message));
    this.helper = helper;
    this.idle(helper);
    return helper;
  }

  private send(helper: ChildProcess, request: SpawnerRequest): void {
    helper.send(request, (error) => {
      if (error) this.stopped(helper, error.message);
    });
  }

  private receive(report: SpawnerReport): void {
    const listeners = this.running.get(report.id);
    if (!listeners) return;
    switch (report.kind) {
      case 'output':
        for (const listener of listeners.output) listener(report.stream, Buffer.from(report.chunk));
        return;
      case 'exit':
        for (const listener of listeners.exit) listener(report.code, report.signal);
        return;
      case 'error':
        for (const listener of listeners.error) listener(new Error(report.message));
        return;
      case 'close':
        this.running.delete(report.id);
        for (const listener of listeners.close) listener();
        if (this.helper) this.idle(this.helper);
    }
  }

  /** The helper died (or its channel failed): its harnesses fail, and the next spawn starts another. */
  private stopped(helper: ChildProcess, why: string): void {
    if (this.helper !== helper) return;
    this.helper = undefined;
    const error = new TransientNodeError(`The worker's sandbox spawner stopped (${why}); the node is retried`);
    const failed = [...this.running.values()];
    this.running.clear();
    for (const listeners of failed) for (const listener of listeners.error) listener(error);
    if (helper.exitCode === null && helper.signalCode === null) helper.kill('SIGKILL');
  }

  /** An idle helper does not keep this process alive; one with harnesses running does. */
  private idle(helper: ChildProcess): void {
    if (this.running.size > 0) return;
    helper.unref();
    helper.channel?.unref();
  }
}

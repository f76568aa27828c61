import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { PythonSettings } from '../../config/settings';
import { NodeExecutionError } from '../errors';
import { choosePython } from './python-choice';
import type { PythonEnvironment } from './python-environment';
import { PYTHON_HARNESS } from './python-harness';
import { type PythonRunOptions, harnessArgs, runLaunch } from './python-runner';
import { SANDBOX_UID, SLIRP_RESOLV_CONF, buildLaunch, type Launch } from './sandbox';
import { type CgroupSupport, type SandboxCgroup, detectCgroups } from './sandbox-cgroup';
import { attachNetwork } from './sandbox-network';
import { type AttachNetwork, PROBE_PYTHON_ARGS, checkTunDevice, findBwrap, probeSandbox } from './sandbox-preflight';
import { SandboxSlots } from './sandbox-slots';
import { Spawner } from './spawner';
import { sandboxUnavailable } from './sandbox-unavailable';

/** What /api/health shows about the Python sandbox. */
export interface SandboxState {
  ok: boolean;
  /** One line: the mechanism and what it runs, or why it cannot start and what to set. */
  detail: string;
}

const READY_FOR_MS = 60_000;
const MB = 1024 * 1024;

/**
 * The worker's Python sandbox: checks once (and again after a minute) that it can start, then runs
 * each PythonFuncNode in a fresh one. Secure by default: when the sandbox cannot start, runs fail
 * with the cause and the setting instead of falling back to unsandboxed code.
 */
export class PythonSandbox {
  private environment: Promise<PythonEnvironment> | undefined;
  private bwrap: Promise<string> | undefined;
  private readyUntil = 0;
  private readying: Promise<PythonEnvironment> | undefined;
  private resolvConf: Promise<string> | undefined;
  private cgroups: Promise<CgroupSupport> | undefined;

  private readonly slots: SandboxSlots;
  /** Starts each run's processes (spawner.ts); public for tests, which find them among its children. */
  readonly spawner = new Spawner();

  constructor(readonly settings: Readonly<PythonSettings>) {
    this.slots = new SandboxSlots(settings.maxConcurrent);
  }

  /** Its slots, busy and free, as spur_sandbox_slots shows them. */
  slotSamples(): Array<{ labels: { state: 'busy' | 'free' }; value: number }> {
    const { busy, free } = this.slots.states();
    return [
      { labels: { state: 'busy' }, value: busy },
      { labels: { state: 'free' }, value: free },
    ];
  }

  /** Runs the code (under `options.program`) in a fresh sandbox once one of the worker's slots is free. */
  async run(options: PythonRunOptions): Promise<Record<string, unknown>> {
    const release = await this.slots.acquire(options.signal, options.heartbeat);
    try {
      return await this.runNow(options);
    } finally {
      release();
    }
  }

  private async runNow(options: PythonRunOptions): Promise<Record<string, unknown>> {
    const python = await this.ready();
    if (this.settings.sandbox === 'bubblewrap') return this.runSandboxed(python, options);
    const launch = await this.launch(python, harnessArgs(options.program ?? PYTHON_HARNESS, options));
    // Unsandboxed (trusted code only): a scratch folder of the worker's, removed afterwards.
    const dir = await mkdtemp(path.join(tmpdir(), 'spur-py-'));
    try {
      return await runLaunch(launch, dir, options, { spawner: this.spawner });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  /** In its own cgroup when the host allows: the memory cap counts its processes and its two tmpfs. */
  private async runSandboxed(python: PythonEnvironment, options: PythonRunOptions): Promise<Record<string, unknown>> {
    const support = await this.cgroupSupport();
    const memoryMb = options.memoryLimitMb + 2 * this.settings.scratchMb;
    // bwrap and the namespace's init are tasks of the sandbox too.
    const cgroup: SandboxCgroup | undefined = support.available
      ? await support.create({ memoryBytes: memoryMb * MB, tasks: this.settings.maxProcesses + 2 })
      : undefined;
    try {
      const launch = await this.launch(
        python,
        harnessArgs(options.program ?? PYTHON_HARNESS, options),
        cgroup?.procsFiles,
      );
      return await runLaunch(launch, '/', options, { started: this.attach(launch, python), spawner: this.spawner });
    } catch (error) {
      if (cgroup && (await cgroup.oomKilled())) {
        throw new NodeExecutionError(
          `Python code exceeded the sandbox's memory cap of ${memoryMb} MB (memory_limit_mb ${options.memoryLimitMb} plus twice SPUR_PYTHON_SCRATCH_MB for /tmp and /dev/shm), counted over all its processes`,
        );
      }
      throw error;
    } finally {
      // Not awaited: the kernel reaps the sandbox's processes after the result is in, and the node
      // need not wait for that; a cgroup left by a worker that dies meanwhile is swept at its next start.
      void cgroup?.remove();
    }
  }

  /** Detected once per worker; `off` skips detection. */
  private cgroupSupport(): Promise<CgroupSupport> {
    this.cgroups ??=
      this.settings.cgroup === 'off'
        ? Promise.resolve({ available: false, reason: 'SPUR_PYTHON_CGROUP=off' })
        : detectCgroups();
    return this.cgroups;
  }

  /** The state for /api/health; never throws. */
  async state(): Promise<SandboxState> {
    try {
      const python = await this.ready();
      if (this.settings.sandbox === 'off')
        return {
          ok: true,
          detail: `off (SPUR_PYTHON_SANDBOX=off): Python ${python.version} runs unsandboxed, for trusted code only`,
        };
      const note = python.note ? `; ${python.note}` : '';
      const support = await this.cgroupSupport();
      const caps = support.available
        ? `memory and task caps per sandbox through cgroup ${support.version}`
        : `no per-sandbox cgroup caps (${support.reason}; SPUR_PYTHON_CGROUP=required refuses to run without them)`;
      return {
        ok: true,
        detail: `bubblewrap, network ${this.settings.network}, Python ${python.version} (${python.executable}), ${caps}${note}`,
      };
    } catch (error) {
      return { ok: false, detail: (error as Error).message };
    }
  }

  /**
   * Resolves the environment and, with a sandbox, proves that one starts (cached for a minute). Runs
   * that start together wait on one probe: each would otherwise start a sandbox of its own.
   */
  private ready(): Promise<PythonEnvironment> {
    this.readying ??= this.checkReady().finally(() => (this.readying = undefined));
    return this.readying;
  }

  private async checkReady(): Promise<PythonEnvironment> {
    const python = await this.python();
    if (this.settings.sandbox === 'off' || Date.now() < this.readyUntil) return python;
    await this.bwrapPath();
    if (this.settings.network === 'internet') await checkTunDevice();
    const support = await this.cgroupSupport();
    if (!support.available && this.settings.cgroup === 'required')
      throw sandboxUnavailable(
        `SPUR_PYTHON_CGROUP=required, and no cgroup can be made for a sandbox: ${support.reason}`,
      );
    const launch = await this.launch(python, [...PROBE_PYTHON_ARGS]);
    await probeSandbox(launch, this.attach(launch, python));
    this.readyUntil = Date.now() + READY_FOR_MS;
    return python;
  }

  private python(): Promise<PythonEnvironment> {
    this.environment ??= choosePython(this.settings);
    // Not cached when it fails: the interpreter may be installed without restarting the worker.
    this.environment.catch(() => (this.environment = undefined));
    return this.environment.catch((error: Error) => Promise.reject(sandboxUnavailable(error.message)));
  }

  private async launch(python: PythonEnvironment, pythonArgs: string[], cgroupProcs?: string[]): Promise<Launch> {
    if (this.settings.sandbox === 'off')
      return buildLaunch({
        python,
        bwrap: '',
        pythonArgs,
        settings: this.settings,
        workerUid: process.getuid?.() ?? SANDBOX_UID,
      });
    const resolvConf = this.settings.network === 'internet' ? await this.resolvConfFile() : undefined;
    return buildLaunch({
      python,
      bwrap: await this.bwrapPath(),
      pythonArgs,
      settings: this.settings,
      workerUid: process.getuid?.() ?? SANDBOX_UID,
      resolvConf,
      cgroupProcs,
    });
  }

  /** Looked up once per worker; again after a failure, since bwrap may be installed meanwhile. */
  private bwrapPath(): Promise<string> {
    this.bwrap ??= findBwrap(this.settings.network);
    this.bwrap.catch(() => (this.bwrap = undefined));
    return this.bwrap;
  }

  private attach(launch: Launch, python: PythonEnvironment): AttachNetwork {
    return launch.infoFd === undefined ? undefined : (child) => attachNetwork(child, launch, python.executable);
  }

  private resolvConfFile(): Promise<string> {
    this.resolvConf ??= (async () => {
      const dir = await mkdtemp(path.join(tmpdir(), 'spur-sandbox-'));
      await chmod(dir, 0o755); // the sandbox user binds the file from here
      const file = path.join(dir, 'resolv.conf');
      await writeFile(file, SLIRP_RESOLV_CONF, { mode: 0o644 });
      return file;
    })();
    return this.resolvConf;
  }
}

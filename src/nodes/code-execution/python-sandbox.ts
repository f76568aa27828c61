import { type ChildProcess, type StdioOptions, execFile, spawn } from 'node:child_process';
import { constants, statSync } from 'node:fs';
import { access, chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { PythonSettings } from '../../config/settings';
import { NodeExecutionError } from '../errors';
import { PYTHON_HARNESS } from './python-harness';
import { type PythonEnvironment, isInside, resolvePythonEnvironment } from './python-environment';
import { type PythonRunOptions, harnessArgs, runLaunch } from './python-runner';
import { exposedPrivateDirs } from './private-dirs';
import { SANDBOX_UID, SLIRP_RESOLV_CONF, buildLaunch, sandboxReadableDirs, type Launch } from './sandbox';
import { type CgroupSupport, type SandboxCgroup, detectCgroups } from './sandbox-cgroup';
import { attachNetwork } from './sandbox-network';
import { SandboxSlots } from './sandbox-slots';

/** What /api/health shows about the Python sandbox. */
export interface SandboxState {
  ok: boolean;
  /** One line: the mechanism and what it runs, or why it cannot start and what to set. */
  detail: string;
}

const READY_FOR_MS = 60_000;
const MB = 1024 * 1024;
/** Where a distribution's own interpreter lives: outside any home folder. */
const SYSTEM_INTERPRETERS = ['/usr/bin/python3', '/usr/local/bin/python3'];
const PROBE_CODE = 'print("sandbox-ok")';

/**
 * The worker's Python sandbox: checks once (and again after a minute) that it can start, then runs
 * each PythonFuncNode in a fresh one. Secure by default: when the sandbox cannot start, runs fail
 * with the cause and the setting instead of falling back to unsandboxed code.
 */
export class PythonSandbox {
  private environment: Promise<PythonEnvironment> | undefined;
  private bwrap: Promise<string> | undefined;
  private readyUntil = 0;
  private resolvConf: Promise<string> | undefined;
  private cgroups: Promise<CgroupSupport> | undefined;

  private readonly slots: SandboxSlots;

  constructor(readonly settings: Readonly<PythonSettings>) {
    this.slots = new SandboxSlots(settings.maxConcurrent);
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
      return await runLaunch(launch, dir, options);
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
      return await runLaunch(launch, '/', options, this.attach(launch, python));
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

  /** Resolves the environment and, with a sandbox, proves that one starts (cached for a minute). */
  private async ready(): Promise<PythonEnvironment> {
    const python = await this.python();
    if (this.settings.sandbox === 'off' || Date.now() < this.readyUntil) return python;
    await this.bwrapPath();
    if (this.settings.network === 'internet') await checkTunDevice();
    const support = await this.cgroupSupport();
    if (!support.available && this.settings.cgroup === 'required')
      throw unavailable(`SPUR_PYTHON_CGROUP=required, and no cgroup can be made for a sandbox: ${support.reason}`);
    const launch = await this.launch(python, ['-I', '-c', PROBE_CODE]);
    const output = await probe(launch, this.attach(launch, python));
    if (!output.includes('sandbox-ok')) throw unavailable(`a probe in the sandbox printed: ${output.slice(0, 300)}`);
    this.readyUntil = Date.now() + READY_FOR_MS;
    return python;
  }

  private python(): Promise<PythonEnvironment> {
    this.environment ??= this.chooseEnvironment().then((python) => this.refuseExposing(python));
    // Not cached when it fails: the interpreter may be installed without restarting the worker.
    this.environment.catch(() => (this.environment = undefined));
    return this.environment.catch((error: Error) => Promise.reject(unavailable(error.message)));
  }

  /**
   * SPUR_PYTHON when set; else `python3` on PATH, unless a root worker's sandbox user cannot enter
   * its folder (pyenv under /root): then the system's interpreter, noted for health, so a fresh
   * machine runs Python nodes sandboxed with nothing set.
   */
  private async chooseEnvironment(): Promise<PythonEnvironment> {
    const configured = this.settings.interpreter;
    const python = await resolvePythonEnvironment(configured ?? 'python3');
    const blocked = this.blockedDir(python);
    if (!blocked) return python;
    const cannotEnter = `the Python environment ${python.roots.find((root) => isInside(root, blocked)) ?? python.executable} is inside ${blocked}, which the sandbox user (uid ${SANDBOX_UID}, used when the worker runs as root) cannot enter`;
    if (configured !== undefined)
      throw new Error(`${cannotEnter}; set SPUR_PYTHON to an interpreter outside it, e.g. /usr/bin/python3`);
    for (const candidate of SYSTEM_INTERPRETERS) {
      const system = await resolvePythonEnvironment(candidate).catch(() => undefined);
      if (system && !this.blockedDir(system))
        return {
          ...system,
          note: `python3 on PATH cannot be used: ${cannotEnter}, so ${candidate} runs user code (SPUR_PYTHON chooses another)`,
        };
    }
    throw new Error(
      `${cannotEnter}, and no system interpreter (${SYSTEM_INTERPRETERS.join(', ')}) can stand in; set SPUR_PYTHON to an interpreter the sandbox user can reach`,
    );
  }

  /**
   * The sandbox binds the environment's directories read-only: one holding Spur's data folder or
   * source tree (a venv made there, an editable install's .pth) would let user code read the
   * secret key and the code. Refused, naming both, rather than hiding them under the bind.
   */
  private refuseExposing(python: PythonEnvironment): PythonEnvironment {
    if (this.settings.sandbox === 'off') return python;
    const exposed = exposedPrivateDirs(sandboxReadableDirs(python), this.settings.privateDirs);
    if (exposed.length === 0) return python;
    const shown = exposed.map(({ dir, root }) => `${dir.name}, ${dir.path} (the sandbox binds ${root})`);
    throw new Error(
      `the Python environment ${python.executable} would show ${shown.join(' and ')} to user code; set SPUR_PYTHON to an interpreter whose directories hold neither (e.g. /usr/bin/python3), or keep the data folder elsewhere`,
    );
  }

  /** A root worker runs the sandbox as uid 65534: the first folder on the way to the environment it cannot enter. */
  private blockedDir(python: PythonEnvironment): string | undefined {
    if (this.settings.sandbox === 'off' || process.getuid?.() !== 0) return undefined;
    for (const root of python.roots) {
      for (let dir = path.dirname(root); dir !== '/'; dir = path.dirname(dir)) {
        if ((statSync(dir).mode & 0o001) === 0) return dir;
      }
    }
    return undefined;
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

  /** bwrap on the worker's PATH (the launch itself runs with an empty environment). */
  private bwrapPath(): Promise<string> {
    this.bwrap ??= new Promise<string>((resolve, reject) => {
      execFile('/bin/sh', ['-c', 'command -v bwrap'], { timeout: 15_000 }, (error, stdout) => {
        const found = stdout.trim();
        if (error || !found.startsWith('/'))
          reject(
            unavailable(
              `bwrap is not installed (Debian: apt-get install bubblewrap${this.settings.network === 'internet' ? ' slirp4netns' : ''})`,
            ),
          );
        else resolve(found);
      });
    });
    this.bwrap.catch(() => (this.bwrap = undefined));
    return this.bwrap;
  }

  private attach(launch: Launch, python: PythonEnvironment): ((child: ChildProcess) => Promise<void>) | undefined {
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

/**
 * The opt-in network's slirp4netns opens /dev/net/tun as the user the sandbox runs as. A root
 * worker hands that user a private copy of the device (sandbox-network.ts); any other worker user
 * must be able to open the device itself, or no sandbox gets a network.
 */
async function checkTunDevice(): Promise<void> {
  const uid = process.getuid?.();
  if (uid === 0) return;
  try {
    await access(TUN_DEVICE, constants.R_OK | constants.W_OK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT'
        ? `${TUN_DEVICE} does not exist on this host (in a container, pass the device in)`
        : `the worker's user (uid ${uid}) cannot open ${TUN_DEVICE} (${code})`;
    throw unavailable(
      `the opt-in network (SPUR_PYTHON_NETWORK=internet) needs the tun device, and ${why}; run the worker as root, or give its user read and write access to ${TUN_DEVICE}`,
    );
  }
}

const TUN_DEVICE = '/dev/net/tun';

/** The sandbox cannot start here: the code never ran, and the same code may run on a worker that can. */
export class SandboxUnavailableError extends NodeExecutionError {}

function unavailable(cause: string): NodeExecutionError {
  return new SandboxUnavailableError(
    `The Python sandbox cannot start (SPUR_PYTHON_SANDBOX=bubblewrap): ${cause}. Python nodes do not run without it; SPUR_PYTHON_SANDBOX=off runs them unsandboxed, for trusted code only.`,
  );
}

/** Starts `launch` once and returns what it printed; a start failure becomes a readable cause. */
function probe(launch: Launch, attach: ((child: ChildProcess) => Promise<void>) | undefined): Promise<string> {
  return new Promise((resolve, reject) => {
    const extra = launch.blockFd === undefined ? [] : ['ignore', 'pipe', 'pipe'];
    const child = spawn(launch.command, launch.args, {
      env: launch.env,
      cwd: '/',
      stdio: ['ignore', 'pipe', 'pipe', ...extra] as StdioOptions,
      timeout: 15_000,
      ...(launch.uid === undefined ? {} : { uid: launch.uid, gid: launch.gid }),
    });
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.once('error', (error: NodeJS.ErrnoException) => {
      const install = `Debian: apt-get install bubblewrap${launch.infoFd === undefined ? '' : ' slirp4netns'}`;
      reject(
        unavailable(
          error.code === 'ENOENT'
            ? `${launch.command} is not installed (${install})`
            : `${launch.command} could not start: ${error.message}`,
        ),
      );
    });
    child.once('close', (code, signal) => {
      if (code === 0) resolve(stdout);
      else
        reject(
          unavailable(`${launch.command} failed (${signal ?? `exit code ${code}`}): ${stderr.trim().slice(0, 500)}`),
        );
    });
    attach?.(child).catch((error: Error) => {
      child.kill('SIGKILL');
      reject(unavailable(`the network could not be attached: ${error.message}`));
    });
  });
}

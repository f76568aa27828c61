import { type ChildProcess, type StdioOptions, execFile, spawn } from 'node:child_process';
import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import type { PythonSettings } from '../../config/settings';
import type { Launch } from './sandbox';
import { sandboxUnavailable } from './sandbox-unavailable';

/**
 * The checks that a sandbox can start on this host, made before any user code is given to one:
 * each failure says what is missing and how to install or allow it, instead of a run failing
 * with bwrap's or slirp4netns' own words.
 */

/** Readies the running sandbox's network (the opt-in one); absent without one. */
export type AttachNetwork = ((child: ChildProcess) => Promise<void>) | undefined;

/** What the probe runs: isolated mode, so nothing of the worker's environment shapes it. */
export const PROBE_PYTHON_ARGS: readonly string[] = ['-I', '-c', 'print("sandbox-ok")'];

/** bwrap on the worker's PATH (the launch itself runs with an empty environment). */
export function findBwrap(network: PythonSettings['network']): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    execFile('/bin/sh', ['-c', 'command -v bwrap'], { timeout: 15_000 }, (error, stdout) => {
      const found = stdout.trim();
      if (error || !found.startsWith('/'))
        reject(
          sandboxUnavailable(
            `bwrap is not installed (Debian: apt-get install bubblewrap${network === 'internet' ? ' slirp4netns' : ''})`,
          ),
        );
      else resolve(found);
    });
  });
}

const TUN_DEVICE = '/dev/net/tun';

/**
 * The opt-in network's slirp4netns opens /dev/net/tun as the user the sandbox runs as. A root
 * worker hands that user a private copy of the device (sandbox-network.ts); any other worker user
 * must be able to open the device itself, or no sandbox gets a network.
 */
export async function checkTunDevice(): Promise<void> {
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
    throw sandboxUnavailable(
      `the opt-in network (SPUR_PYTHON_NETWORK=internet) needs the tun device, and ${why}; run the worker as root, or give its user read and write access to ${TUN_DEVICE}`,
    );
  }
}

/** Starts `launch` (of PROBE_PYTHON_ARGS) once and proves that the code in it ran. */
export async function probeSandbox(launch: Launch, attach: AttachNetwork): Promise<void> {
  const output = await probe(launch, attach);
  if (!output.includes('sandbox-ok'))
    throw sandboxUnavailable(`a probe in the sandbox printed: ${output.slice(0, 300)}`);
}

/** Starts `launch` once and returns what it printed; a start failure becomes a readable cause. */
function probe(launch: Launch, attach: AttachNetwork): Promise<string> {
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
        sandboxUnavailable(
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
          sandboxUnavailable(
            `${launch.command} failed (${signal ?? `exit code ${code}`}): ${stderr.trim().slice(0, 500)}`,
          ),
        );
    });
    attach?.(child).catch((error: Error) => {
      child.kill('SIGKILL');
      reject(sandboxUnavailable(`the network could not be attached: ${error.message}`));
    });
  });
}

import type { PythonSettings } from '../../config/settings';
import { isInside, type PythonEnvironment } from './python-environment';

/**
 * How a PythonFuncNode process is launched and contained: the one place that knows the mechanism.
 *
 * Chosen: bubblewrap (Debian's `bwrap`, maintained by the Flatpak project), unprivileged, in a new
 * user namespace. It runs the configured CPython with its C extensions and site-packages, starts in
 * milliseconds and needs no daemon. Pyodide (CPython in WebAssembly) was the alternative: no
 * syscalls at all, but no subprocesses or native packages outside its own builds, packages fetched
 * from a CDN at run time (nothing may be downloaded here) and a second-scale start per run.
 *
 * What the sandbox gets: its own PID, network, mount, IPC, UTS and user namespaces; a root made of
 * read-only binds of /usr (and the Python environment's own directories), a fresh /proc showing only
 * its processes, a minimal /dev, size-capped tmpfs scratch on /tmp and /dev/shm, and no environment
 * but the few variables set here. Its processes die with it: when the launcher (bwrap) is killed,
 * the namespace's init is killed and the kernel kills every process in the PID namespace, however
 * daemonized. Limits (prlimit, in the namespace so they count only its processes): processes plus
 * threads, file size, core dumps; the harness adds address space and CPU time. Where the host
 * allows, a cgroup per sandbox (sandbox-cgroup.ts) caps its memory and tasks as a whole.
 */

/** The uid/gid the sandbox runs as when the worker is root (bubblewrap's user namespace must be unprivileged). */
export const SANDBOX_UID = 65534;

/** Where slirp4netns's virtual resolver lives (the opt-in network). */
export const SLIRP_RESOLV_CONF = 'nameserver 10.0.2.3\n';

export interface Launch {
  command: string;
  /** True for bubblewrap (it reports a command killed by signal N as exit code 128 + N). */
  sandboxed: boolean;
  args: string[];
  env: Record<string, string>;
  /** Set when spawn must drop from root before the launcher runs. */
  uid?: number;
  gid?: number;
  /** Set when a root worker's sandbox runs as SANDBOX_UID (dropped by spawn or by the launcher). */
  sandboxUid?: number;
  /** fds of bwrap's --info-fd / --block-fd (only with the opt-in network, which attaches after start). */
  infoFd?: number;
  blockFd?: number;
}

export interface LaunchRequest {
  python: PythonEnvironment;
  /** Absolute path of bwrap (found on the worker's PATH). */
  bwrap: string;
  /** Arguments after the interpreter. */
  pythonArgs: string[];
  settings: Pick<PythonSettings, 'sandbox' | 'network' | 'maxProcesses' | 'scratchMb'>;
  /** process.getuid() of the worker. */
  workerUid: number;
  /** A host file holding SLIRP_RESOLV_CONF, for the opt-in network. */
  resolvConf?: string;
  /** cgroup.procs files of the sandbox's cgroup (sandbox-cgroup.ts): the launcher joins them first. */
  cgroupProcs?: string[];
}

/**
 * Joins the cgroups named before `--` (writing its own pid), then execs the rest. The launcher is
 * in them before bubblewrap starts, so every process of the sandbox is too.
 */
const JOIN_CGROUPS = 'for f; do shift; [ "$f" = -- ] && break; echo $$ > "$f" || exit 125; done; exec "$@"';

/** What user code sees in its environment: nothing of the worker's. */
export const SANDBOX_ENV: Readonly<Record<string, string>> = Object.freeze({
  PATH: '/usr/local/bin:/usr/bin:/bin',
  LANG: 'C.UTF-8',
  HOME: '/tmp',
  TMPDIR: '/tmp',
  PYTHONDONTWRITEBYTECODE: '1',
  PYTHONIOENCODING: 'utf-8',
});

const MB = 1024 * 1024;
/** Read-only system paths besides /usr; none holds a secret. Missing ones are skipped. */
const SYSTEM_FILES = ['/etc/ssl', '/etc/ca-certificates', '/etc/localtime', '/etc/mime.types'];
/** Merged-/usr symlinks of Debian (and most distributions). */
const USR_LINKS: [string, string][] = [
  ['usr/bin', '/bin'],
  ['usr/sbin', '/sbin'],
  ['usr/lib', '/lib'],
  ['usr/lib64', '/lib64'],
];

/** The environment's own directories the sandbox binds: those /usr (bound whole) does not hold. */
function environmentBinds(python: PythonEnvironment): string[] {
  return python.roots.filter((r) => !isInside(r, '/usr'));
}

/** Every host directory a sandbox of this environment can read: nothing else of the host is in it. */
export function sandboxReadableDirs(python: PythonEnvironment): string[] {
  return ['/usr', ...SYSTEM_FILES, ...environmentBinds(python)];
}

export function buildLaunch(request: LaunchRequest): Launch {
  const { python, pythonArgs, settings } = request;
  if (settings.sandbox === 'off') {
    return { command: python.executable, sandboxed: false, args: pythonArgs, env: { ...SANDBOX_ENV } };
  }
  const args = [
    '--unshare-all',
    '--unshare-user',
    '--disable-userns',
    '--die-with-parent',
    '--new-session',
    '--clearenv',
  ];
  for (const [name, value] of Object.entries(SANDBOX_ENV)) args.push('--setenv', name, value);
  args.push('--ro-bind', '/usr', '/usr');
  for (const [target, link] of USR_LINKS) args.push('--symlink', target, link);
  for (const file of SYSTEM_FILES) args.push('--ro-bind-try', file, file);
  for (const root of environmentBinds(python)) args.push('--ro-bind', root, root);
  args.push('--proc', '/proc', '--dev', '/dev');
  const scratchBytes = String(settings.scratchMb * MB);
  args.push(
    '--size',
    scratchBytes,
    '--tmpfs',
    '/tmp',
    '--size',
    scratchBytes,
    '--tmpfs',
    '/dev/shm',
    '--chdir',
    '/tmp',
  );
  const launch: Launch = { command: request.bwrap, sandboxed: true, args, env: {} };
  if (settings.network === 'internet') {
    if (!request.resolvConf) throw new Error('the opt-in network needs a resolv.conf file');
    args.push('--ro-bind', request.resolvConf, '/etc/resolv.conf', '--info-fd', '4', '--block-fd', '5');
    Object.assign(launch, { infoFd: 4, blockFd: 5 });
  }
  // Everything else in the new root (/, /dev) stays read-only: only the two tmpfs take writes.
  args.push('--remount-ro', '/dev', '--remount-ro', '/');
  args.push(
    '--',
    'prlimit',
    `--nproc=${settings.maxProcesses}`,
    `--fsize=${settings.scratchMb * MB}`,
    '--core=0',
    '--',
    python.executable,
    ...pythonArgs,
  );
  const dropRoot = request.workerUid === 0;
  if (dropRoot) launch.sandboxUid = SANDBOX_UID;
  if (request.cgroupProcs === undefined) {
    if (dropRoot) Object.assign(launch, { uid: SANDBOX_UID, gid: SANDBOX_UID });
    return launch;
  }
  // Joining a cgroup takes the worker's rights, so a root worker drops to the sandbox user after
  // joining (setpriv, util-linux), where spawn would drop before the launcher runs.
  const drop = dropRoot ? ['setpriv', `--reuid=${SANDBOX_UID}`, `--regid=${SANDBOX_UID}`, '--clear-groups', '--'] : [];
  return {
    ...launch,
    command: '/bin/sh',
    args: ['-c', JOIN_CGROUPS, 'spur-sandbox', ...request.cgroupProcs, '--', ...drop, request.bwrap, ...args],
  };
}

import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, readdir, rmdir, writeFile } from 'node:fs/promises';
import path from 'node:path';

/**
 * Per-sandbox caps through cgroups: every process of one sandbox (bwrap, its init, the user's
 * code and whatever it forks) shares one memory cap, counting the sandbox's tmpfs scratch, and one
 * task cap. prlimit's caps are per process (64 processes × 1 GiB of address space); these bound
 * the sandbox as a whole.
 *
 * cgroup v2 where /sys/fs/cgroup is the unified hierarchy and the worker's own cgroup offers the
 * memory and pids controllers (delegated to its user, or the worker is root); cgroup v1 where the
 * memory and pids hierarchies are mounted under /sys/fs/cgroup and writable. Each sandbox gets a
 * child of the worker's own cgroup, created before the launch and removed after it; the launcher
 * joins it before it execs bubblewrap, so no process of the sandbox ever runs outside it.
 */

/** What one sandbox may hold. */
export interface SandboxCaps {
  memoryBytes: number;
  tasks: number;
}

/** One sandbox's cgroup (one directory per hierarchy). */
export interface SandboxCgroup {
  /** The cgroup.procs files the launcher writes its own pid to. */
  procsFiles: string[];
  /** Whether the kernel's OOM killer killed a process of this sandbox for its memory cap. */
  oomKilled(): Promise<boolean>;
  /** Kills what is left in it and removes it; never throws. */
  remove(): Promise<void>;
}

export type CgroupSupport =
  | { available: true; version: 'v1' | 'v2'; create(caps: SandboxCaps): Promise<SandboxCgroup> }
  | { available: false; reason: string };

/** A hierarchy the sandbox cgroups are made in, and how caps are written and OOM kills read there. */
interface Hierarchy {
  /** The worker's own cgroup in this hierarchy; sandboxes are its children. */
  parent: string;
  limits(caps: SandboxCaps): Limit[];
  /** File and key counting OOM kills in the cgroup. */
  oom?: { file: string; key: string };
}

interface Limit {
  file: string;
  value: string;
  /** Absent without swap accounting (v1 memsw, v2 swap.max): skipped then. */
  optional?: boolean;
}

const ROOT = '/sys/fs/cgroup';
const NAME_PREFIX = 'spur-sandbox-';
const WORKER_LEAF = 'spur-worker';

/** Lines of /proc/self/cgroup: the v2 path, and each v1 controller's path. */
export function parseProcCgroup(text: string): { unified: string | undefined; v1: Map<string, string> } {
  let unified: string | undefined;
  const v1 = new Map<string, string>();
  for (const line of text.split('\n')) {
    const match = /^(\d+):([^:]*):(.*)$/.exec(line.trim());
    if (!match) continue;
    const [id, controllers, cgroupPath] = [match[1], match[2] ?? '', match[3] ?? ''];
    if (id === '0' && controllers === '') unified = cgroupPath;
    else for (const controller of controllers.split(',')) v1.set(controller, cgroupPath);
  }
  return { unified, v1 };
}

/** The sandbox-cgroup names a worker uses: its pid, so a later worker can sweep a dead one's leftovers. */
export function sandboxCgroupName(workerPid: number, suffix: string): string {
  return `${NAME_PREFIX}${workerPid}-${suffix}`;
}

/** The worker pid a sandbox-cgroup name belongs to, or undefined for any other name. */
export function ownerOf(name: string): number | undefined {
  const match = new RegExp(`^${NAME_PREFIX}(\\d+)-[0-9a-f]+$`).exec(name);
  return match ? Number(match[1]) : undefined;
}

const V2_LIMITS = (caps: SandboxCaps): Limit[] => [
  { file: 'memory.max', value: String(caps.memoryBytes) },
  { file: 'memory.swap.max', value: '0', optional: true },
  { file: 'pids.max', value: String(caps.tasks) },
];
const V1_MEMORY_LIMITS = (caps: SandboxCaps): Limit[] => [
  { file: 'memory.limit_in_bytes', value: String(caps.memoryBytes) },
  // After limit_in_bytes: the kernel refuses a memsw limit below the memory limit.
  { file: 'memory.memsw.limit_in_bytes', value: String(caps.memoryBytes), optional: true },
];
const V1_PIDS_LIMITS = (caps: SandboxCaps): Limit[] => [{ file: 'pids.max', value: String(caps.tasks) }];

/**
 * Finds the hierarchies this worker may make sandbox cgroups in, proves it by making and removing
 * one, and sweeps the leftovers of workers that died. Never throws: a host without usable cgroups
 * gets the reason.
 */
export async function detectCgroups(): Promise<CgroupSupport> {
  let version: 'v1' | 'v2';
  let hierarchies: Hierarchy[];
  try {
    const own = parseProcCgroup(await readFile('/proc/self/cgroup', 'utf8'));
    if (own.unified !== undefined && existsSync(path.join(ROOT, 'cgroup.controllers'))) {
      version = 'v2';
      hierarchies = [await delegatedV2(path.join(ROOT, own.unified))];
    } else {
      const memory = own.v1.get('memory');
      const pids = own.v1.get('pids');
      if (memory === undefined || pids === undefined)
        return {
          available: false,
          reason: 'this host mounts neither cgroup v2 nor the v1 memory and pids controllers',
        };
      version = 'v1';
      hierarchies = [
        {
          parent: path.join(ROOT, 'memory', memory),
          limits: V1_MEMORY_LIMITS,
          oom: { file: 'memory.oom_control', key: 'oom_kill' },
        },
        { parent: path.join(ROOT, 'pids', pids), limits: V1_PIDS_LIMITS },
      ];
    }
    await Promise.all(hierarchies.map(sweepDeadWorkers));
    const trial = await createIn(hierarchies, { memoryBytes: 64 * 1024 * 1024, tasks: 8 });
    await trial.remove();
  } catch (error) {
    return { available: false, reason: describe(error) };
  }
  return { available: true, version, create: (caps) => createIn(hierarchies, caps) };
}

/**
 * cgroup v2 lets a cgroup with controllers enabled for its children hold no processes itself. When
 * the worker's cgroup does not offer memory and pids to its children yet, the worker moves the
 * processes there into a leaf of their own and enables them: the same step Docker-in-Docker and
 * systemd's delegation take.
 */
async function delegatedV2(own: string): Promise<Hierarchy> {
  const offered = (await readFile(path.join(own, 'cgroup.controllers'), 'utf8')).split(/\s+/);
  const missing = ['memory', 'pids'].filter((c) => !offered.includes(c));
  if (missing.length > 0)
    throw new Error(`the worker's cgroup ${own} does not offer the ${missing.join(' and ')} controller`);
  const enabled = (await readFile(path.join(own, 'cgroup.subtree_control'), 'utf8')).split(/\s+/);
  if (!enabled.includes('memory') || !enabled.includes('pids')) {
    const leaf = path.join(own, WORKER_LEAF);
    await mkdir(leaf, { recursive: true });
    for (const pid of await procsOf(own)) await writeFile(path.join(leaf, 'cgroup.procs'), pid).catch(() => undefined);
    await writeFile(path.join(own, 'cgroup.subtree_control'), '+memory +pids');
  }
  return { parent: own, limits: V2_LIMITS, oom: { file: 'memory.events', key: 'oom_kill' } };
}

async function createIn(hierarchies: Hierarchy[], caps: SandboxCaps): Promise<SandboxCgroup> {
  const name = sandboxCgroupName(process.pid, randomBytes(6).toString('hex'));
  const dirs: string[] = [];
  const cgroup: SandboxCgroup = {
    procsFiles: hierarchies.map((h) => path.join(h.parent, name, 'cgroup.procs')),
    oomKilled: async () => {
      for (const h of hierarchies) {
        if (!h.oom) continue;
        const text = await readFile(path.join(h.parent, name, h.oom.file), 'utf8').catch(() => '');
        const count = new RegExp(`^${h.oom.key} (\\d+)$`, 'm').exec(text)?.[1];
        if (count !== undefined && Number(count) > 0) return true;
      }
      return false;
    },
    remove: () => Promise.all(dirs.map(emptyAndRemove)).then(() => undefined),
  };
  try {
    for (const h of hierarchies) {
      const dir = path.join(h.parent, name);
      await mkdir(dir);
      dirs.push(dir);
      for (const limit of h.limits(caps)) {
        const file = path.join(dir, limit.file);
        if (limit.optional && !existsSync(file)) continue;
        await writeFile(file, limit.value);
      }
    }
  } catch (error) {
    await cgroup.remove();
    throw error;
  }
  return cgroup;
}

const REMOVE_TRIES = 100;
const REMOVE_PAUSE_MS = 20;

/**
 * The sandbox's processes die with its init once the launcher is killed, but the kernel takes a
 * moment to reap them, and a cgroup holding a process cannot be removed: kill what is left, retry.
 */
async function emptyAndRemove(dir: string): Promise<void> {
  for (let attempt = 0; attempt < REMOVE_TRIES; attempt++) {
    try {
      await rmdir(dir);
      return;
    } catch (error) {
      // ENOENT: gone already; anything but EBUSY: retrying will not help.
      if ((error as NodeJS.ErrnoException).code !== 'EBUSY') return;
    }
    for (const pid of await procsOf(dir)) {
      try {
        process.kill(Number(pid), 'SIGKILL');
      } catch {
        // already gone
      }
    }
    await new Promise((resolve) => setTimeout(resolve, REMOVE_PAUSE_MS));
  }
}

async function procsOf(dir: string): Promise<string[]> {
  const text = await readFile(path.join(dir, 'cgroup.procs'), 'utf8').catch(() => '');
  return text.split('\n').filter((line) => line !== '');
}

/** Removes the sandbox cgroups of workers no longer alive (killed before they could remove them). */
async function sweepDeadWorkers(hierarchy: Hierarchy): Promise<void> {
  for (const entry of await readdir(hierarchy.parent)) {
    const owner = ownerOf(entry);
    if (owner === undefined || owner === process.pid || isAlive(owner)) continue;
    await emptyAndRemove(path.join(hierarchy.parent, entry));
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function describe(error: unknown): string {
  const e = error as NodeJS.ErrnoException;
  if (e.code === 'EROFS') return `${e.path ?? ROOT} is read-only (a container without a writable cgroup mount)`;
  if (e.code === 'EACCES' || e.code === 'EPERM')
    return `the worker's user may not create cgroups in ${e.path ? path.dirname(e.path) : ROOT} (run the worker as root, or delegate its cgroup to its user)`;
  if (e.code === 'ENOENT') return `${e.path ?? ROOT} does not exist`;
  return e.message;
}

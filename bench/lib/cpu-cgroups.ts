// CPU of a process group through a cgroup v1 cpuacct group of its own, where this process can make
// one (root, cgroup v1). Counts what /proc cannot: processes that leave the group's process tree
// before they end. A PythonFuncNode's sandbox does (bubblewrap's launcher exits without reaping the
// namespace's init, so neither cutime nor the group's members ever show the python3 inside), and
// processes that have exited stay counted. cgroup v2 is left out: moving the api into a group of the
// bench's making would take the memory and pids controllers its sandboxes need from under it.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const CPUACCT = '/sys/fs/cgroup/cpuacct';
const PREFIX = 'spur-bench-';

let usable: boolean | undefined;
const made = new Set<string>();

/** Whether groups' CPU is read from cgroups here (decided once; stale groups of earlier benches are swept then). */
export function cgroupAccounting(): boolean {
  if (usable !== undefined) return usable;
  usable = false;
  if (!existsSync(path.join(CPUACCT, 'cpuacct.usage'))) return usable;
  try {
    for (const name of readdirSync(CPUACCT)) if (name.startsWith(PREFIX)) removeQuietly(path.join(CPUACCT, name));
    const probe = path.join(CPUACCT, `${PREFIX}probe-${process.pid}`);
    mkdirSync(probe);
    rmdirSync(probe);
    usable = true;
    process.once('exit', () => made.forEach(removeQuietly));
  } catch {
    usable = false; // not root, or the hierarchy is read-only
  }
  return usable;
}

function removeQuietly(dir: string): void {
  try {
    rmdirSync(dir); // only an empty group goes; one still holding processes stays
  } catch {
    // still in use
  }
}

function groupDir(pgid: number): string {
  const dir = path.join(CPUACCT, `${PREFIX}${pgid}`);
  if (!made.has(dir)) {
    if (!existsSync(dir)) mkdirSync(dir);
    made.add(dir);
  }
  return dir;
}

/** Moves the processes into the group's cgroup; their children inherit it. Ones that exited meanwhile are skipped. */
export function joinCgroup(pgid: number, pids: readonly number[]): void {
  const procs = path.join(groupDir(pgid), 'cgroup.procs');
  const inside = new Set(readFileSync(procs, 'utf8').split('\n').filter(Boolean).map(Number));
  for (const pid of pids) {
    if (inside.has(pid)) continue;
    try {
      writeFileSync(procs, String(pid));
    } catch {
      // exited
    }
  }
}

/** CPU-seconds the group's cgroup has used since it was made, exited processes included. */
export function cgroupSeconds(pgid: number): number {
  return Number(readFileSync(path.join(groupDir(pgid), 'cpuacct.usage'), 'utf8')) / 1e9;
}

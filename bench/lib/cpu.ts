// CPU time per process group (Linux). Each managed child leads its own process group (scripts/lib/
// processes.ts spawns detached), so a group's members are found once by pgrp. Where the bench can
// make cgroups (cpu-cgroups.ts) the members join one of the group's own and the group's CPU is read
// there, sandboxed python3 included; elsewhere each member's /proc stat is read: utime+stime+cutime+
// cstime, which counts reaped children but not a sandbox's processes, which leave the tree.
import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import { type ProcStat, clockTicks, readStat } from '../../scripts/lib/proc-stat';
import { cgroupAccounting, cgroupSeconds, joinCgroup } from './cpu-cgroups';

/** How the report says groups' CPU was read. */
export function cpuSource(): string {
  return cgroupAccounting()
    ? "a cgroup (v1 cpuacct) per process group, which counts a PythonFuncNode's sandboxed python3"
    : "/proc per process (no cgroup could be made: a PythonFuncNode's sandboxed python3 is not counted, since bubblewrap's processes leave the tree)";
}

/** Busy CPU-seconds of the whole machine so far (all cores), from /proc/stat. */
function machineBusySeconds(): number {
  const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0] ?? '';
  const [, user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).map(Number);
  return ((user ?? 0) + (nice ?? 0) + (system ?? 0) + (irq ?? 0) + (softirq ?? 0) + (steal ?? 0)) / clockTicks();
}

export type CpuSample = Record<string, number>;

/**
 * CPU-seconds per named process group, plus `bench` (this process) and `machine` (every busy
 * core). Members are listed once per refresh(), so a sample costs a few small reads.
 */
export class CpuSampler {
  private members = new Map<string, number[]>();

  constructor(private readonly groups: Readonly<Record<string, number>>) {
    this.refresh();
  }

  /**
   * A group's members: the processes in its process group, and the leader's descendants that left
   * it (PostgreSQL's backends each call setsid()).
   */
  refresh(): void {
    const wanted = new Map(Object.entries(this.groups).map(([name, pgid]) => [pgid, name]));
    this.members = new Map(Object.keys(this.groups).map((name) => [name, []]));
    const stats = new Map<number, ProcStat>();
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      const stat = readStat(Number(entry));
      if (stat) stats.set(Number(entry), stat);
    }
    const groupOf = (stat: ProcStat): string | undefined => {
      let name = wanted.get(stat.pgrp);
      for (let up = stat.ppid, depth = 0; name === undefined && up > 1 && depth < 8; depth++) {
        name = wanted.get(up);
        up = stats.get(up)?.ppid ?? 0;
      }
      return name;
    };
    for (const [pid, stat] of stats) {
      const name = groupOf(stat);
      if (name !== undefined) this.members.get(name)?.push(pid);
    }
    if (cgroupAccounting()) for (const [name, pids] of this.members) joinCgroup(this.groups[name] as number, pids);
  }

  sample(): CpuSample {
    const out: CpuSample = {};
    for (const [name, pids] of this.members) {
      out[name] = cgroupAccounting()
        ? cgroupSeconds(this.groups[name] as number)
        : pids.reduce((sum, pid) => sum + (readStat(pid)?.ticks ?? 0), 0) / clockTicks();
    }
    // This process precisely, plus the children it reaped (python3 of the in-process baseline).
    const self = process.cpuUsage();
    out.bench = (self.user + self.system) / 1e6 + (readStat(process.pid)?.childTicks ?? 0) / clockTicks();
    out.machine = machineBusySeconds();
    return out;
  }
}

/** Adds `after − before` into `into` (per key). */
export function accumulate(into: CpuSample, before: CpuSample, after: CpuSample): void {
  for (const key of Object.keys(after))
    into[key] = (into[key] ?? 0) + Math.max(0, (after[key] ?? 0) - (before[key] ?? 0));
}

export interface CpuUsage {
  /** CPU-seconds per process over the phase; `other` = machine busy time not ours (noise). */
  seconds: Record<string, number>;
  /** Share of one core over the phase's wall time, in percent. */
  percentOfCore: Record<string, number>;
  /** CPU-milliseconds per run. */
  msPerRun: Record<string, number>;
}

export const PROCESS_NAMES = ['api', 'worker', 'temporal', 'ferretdb', 'bench'] as const;

/** Per-process totals of a phase: ours, their sum, and what the rest of the machine used meanwhile. */
export function cpuUsage(used: CpuSample, wallSeconds: number, runs: number): CpuUsage {
  const seconds: Record<string, number> = {};
  for (const name of PROCESS_NAMES) seconds[name] = used[name] ?? 0;
  seconds.total = PROCESS_NAMES.reduce((sum, name) => sum + (seconds[name] ?? 0), 0);
  seconds.other = Math.max(0, (used.machine ?? 0) - seconds.total);
  const usage: CpuUsage = { seconds, percentOfCore: {}, msPerRun: {} };
  for (const [name, s] of Object.entries(seconds)) {
    usage.percentOfCore[name] = wallSeconds > 0 ? (100 * s) / wallSeconds : Number.NaN;
    usage.msPerRun[name] = runs > 0 ? (1000 * s) / runs : Number.NaN;
  }
  return usage;
}

export const CORES = os.cpus().length;

/** CPU-seconds so far of each thread of a process, keyed `<tid>:<name>` (Node's own threads are all named `node`). */
export function threadSeconds(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  let tids: string[] = [];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out; // exited
  }
  for (const tid of tids) {
    try {
      const text = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const name = text.slice(text.indexOf('(') + 1, text.lastIndexOf(')'));
      const rest = text.slice(text.lastIndexOf(')') + 2).split(' ');
      out.set(`${tid}:${name}`, (Number(rest[11]) + Number(rest[12])) / clockTicks());
    } catch {
      // the thread ended meanwhile
    }
  }
  return out;
}

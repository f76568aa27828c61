// CPU time of a process from /proc/<pid>/stat (Linux): the suite's per-file costs and the
// benchmarks' per-process CPU read it the same way.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

let ticksPerSecond: number | undefined;
/** Clock ticks per second (the unit of /proc's CPU times). */
export function clockTicks(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

export interface ProcStat {
  ppid: number;
  pgrp: number;
  /** Own plus reaped children's CPU, in clock ticks. */
  ticks: number;
  childTicks: number;
}

/** The process's stat, or undefined once it has exited (or where /proc is missing). */
export function readStat(pid: number | 'self'): ProcStat | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name (field 2) may hold spaces and parentheses: split after its closing paren.
  const rest = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const field = (n: number) => Number(rest[n - 3]); // rest[0] is field 3 (state)
  return {
    ppid: field(4),
    pgrp: field(5),
    ticks: field(14) + field(15) + field(16) + field(17),
    childTicks: field(16) + field(17),
  };
}

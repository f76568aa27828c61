// What each test file cost (test/support/cpu-per-file.ts writes it, scripts/test.ts reads it):
// the suite is CPU-bound on a 2-core host, so its time is cut where the CPU goes.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { clockTicks, readStat } from './proc-stat';

/** One line of `cpu-per-file.jsonl` in the run's temporary folder. */
export interface FileCost {
  file: string;
  /** When the file began (ms since the epoch): with the wall time, the suite's schedule. */
  startedAt: number;
  wallSeconds: number;
  /** The mocha worker's own CPU while the file ran. */
  selfCpuSeconds: number;
  /** CPU of the processes the file started and stopped (apis, workers, servers, browsers). */
  childCpuSeconds: number;
}

export const COST_FILE = 'cpu-per-file.jsonl';

/** The heaviest files by CPU, and the totals, as lines to print after the suite. */
export function describeCosts(dir: string, top = 12): string[] {
  let costs: FileCost[];
  try {
    costs = readFileSync(path.join(dir, COST_FILE), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as FileCost);
  } catch {
    return [];
  }
  const cpu = (c: FileCost) => c.selfCpuSeconds + c.childCpuSeconds;
  const total = costs.reduce((sum, c) => sum + cpu(c), 0);
  const rows = [...costs]
    .sort((a, b) => cpu(b) - cpu(a))
    .slice(0, top)
    .map((c) => `  ${cpu(c).toFixed(0).padStart(5)} CPU-s ${c.wallSeconds.toFixed(0).padStart(5)} s  ${c.file}`);
  return [
    `test files: ${costs.length}, ${total.toFixed(0)} CPU-s in the files' processes; the heaviest:`,
    ...rows,
    ...describeTail(costs),
  ];
}

/**
 * The files that ended last, with when they started (after the suite's first file) and how long
 * they took: a long file that started late is the run's tail, which LONG_FIRST in scripts/test.ts
 * is there to avoid.
 */
function describeTail(costs: readonly FileCost[], count = 5): string[] {
  const first = Math.min(...costs.map((c) => c.startedAt));
  const endOf = (c: FileCost) => c.startedAt + c.wallSeconds * 1000;
  const rows = [...costs]
    .sort((a, b) => endOf(b) - endOf(a))
    .slice(0, count)
    .map(
      (c) =>
        `  +${((c.startedAt - first) / 1000).toFixed(0).padStart(4)} s ${c.wallSeconds.toFixed(0).padStart(5)} s  ${c.file}`,
    );
  return ['the last to end (started after the first file, took):', ...rows];
}

/** CPU-seconds of a process: its own, and its reaped children's; zero where /proc is unreadable. */
export function cpuSecondsOf(pid: number | 'self'): { own: number; children: number } {
  const stat = readStat(pid);
  if (!stat) return { own: 0, children: 0 };
  return { own: (stat.ticks - stat.childTicks) / clockTicks(), children: stat.childTicks / clockTicks() };
}

import { epochMs } from './format';
import type { Run, Task } from './types';

/** How a stretch of a task's time was spent: running, waiting (a slot, a timer, a callback, a child run), paused for a person, or an attempt that failed. */
export type BarKind = 'run' | 'wait' | 'pause' | 'attempt';

export interface Bar {
  nodeId: string;
  status: Task['status'];
  kind: BarKind;
  startMs: number;
  endMs: number;
  /** What it waits for, when it waits. */
  note: string | null;
}

export interface Timeline {
  fromMs: number;
  toMs: number;
  /** One row per task, in start order; a row may hold a wait before its run. */
  rows: Array<{ nodeId: string; status: Task['status']; bars: Bar[] }>;
}

/**
 * The run's tasks on one time axis: each task a row from its start to its end (or now, while it
 * runs; a task with only an end, a mark there); each attempt that failed before, as such; the time it waited for a slot first,
 * as a wait; a task paused for a person, or waiting on a timer, callback or child run, drawn as that until it ends. Pure: the
 * page renders it.
 */
export function timelineOf(run: Pick<Run, 'start_time' | 'end_time' | 'tasks'>, nowMs: number): Timeline {
  const runStart = epochMs(run.start_time) ?? nowMs;
  const runEnd = epochMs(run.end_time) ?? nowMs;
  const rows: Timeline['rows'] = [];
  for (const task of [...run.tasks].sort(byStart)) {
    // An InputNode's task records only its end (it runs as the run starts): a mark there.
    const start = epochMs(task.start_time) ?? epochMs(task.end_time);
    if (start === null) continue;
    const end = epochMs(task.end_time) ?? (task.status === 'RUNNING' || task.status === 'PAUSED' ? runEnd : start);
    const bars: Bar[] = attemptBars(task);
    // A failed task's last attempt is its failure: drawn as that attempt, not again as the task.
    if (task.status === 'FAILED' && bars.length > 0) {
      rows.push({ nodeId: task.node_id, status: task.status, bars });
      continue;
    }
    const waited = Math.min(task.waited_ms ?? 0, end - start);
    if (waited > 0)
      bars.push({
        nodeId: task.node_id,
        status: task.status,
        kind: 'wait',
        startMs: start,
        endMs: start + waited,
        note: 'waited for a slot',
      });
    const kind: BarKind = task.status === 'PAUSED' ? 'pause' : task.waiting_for || task.waiting_reason ? 'wait' : 'run';
    const note =
      kind === 'pause' ? 'paused for a person' : kind === 'wait' ? `waits: ${task.waiting_reason ?? 'limit'}` : null;
    bars.push({
      nodeId: task.node_id,
      status: task.status,
      kind,
      startMs: start + waited,
      endMs: Math.max(end, start + waited),
      note,
    });
    rows.push({ nodeId: task.node_id, status: task.status, bars });
  }
  const ends = rows.flatMap((r) => r.bars.map((b) => b.endMs));
  return { fromMs: runStart, toMs: Math.max(runEnd, runStart + 1, ...ends), rows };
}

/** The node's attempts that failed, each a bar (a lost worker's, whose start is unknown, a mark at its end). */
function attemptBars(task: Task): Bar[] {
  return (task.failed_attempts ?? []).flatMap((a) => {
    const end = epochMs(a.end_time);
    if (end === null) return [];
    return [
      {
        nodeId: task.node_id,
        status: task.status,
        kind: 'attempt' as const,
        startMs: epochMs(a.start_time) ?? end,
        endMs: end,
        note: `attempt ${a.attempt} failed: ${a.error}`,
      },
    ];
  });
}

function byStart(a: Task, b: Task): number {
  const at = (t: Task) => epochMs(t.start_time) ?? epochMs(t.end_time) ?? Infinity;
  return at(a) - at(b);
}

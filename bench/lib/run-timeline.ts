// Where the milliseconds of one blocking run go, from timestamps the system already keeps: the
// client's send and answer, each MongoDB round trip (the counting proxy's clock), the Temporal
// history's event times, the run's task records. Same machine, same clock; no instrumentation in
// the code under test. Stages are medians over many sequential runs.
import type { RoundTrip } from './mongo-counter';
import { median } from './stats';

/** One sequential run as the bench saw it: epoch ms. */
export interface RunWindow {
  sent: number;
  answered: number;
  /** WORKFLOW_EXECUTION_STARTED's event time. */
  workflowStarted: number;
  /** The nodes' tasks (the InputNode's excepted, which the workflow settles itself). */
  tasks: Array<{ start: number; end: number }>;
}

export const STAGES = [
  'api: request → workflow read',
  'MongoDB: read the workflow',
  'api: check inputs, pin the version → insert',
  'MongoDB: insert the run',
  'Temporal: start request → workflow started (server)',
  'workflow started → first node runs',
  'nodes run',
  'last node ended → save begins',
  "MongoDB: the run's save",
  'save written → answer received',
] as const;

/** Each stage's milliseconds for one run, or null when its window lacks a round trip it needs. */
function stagesOf(run: RunWindow, trips: RoundTrip[]): number[] | null {
  const inRun = trips.filter((t) => t.start >= run.sent && t.end <= run.answered);
  const read = inRun.find((t) => t.name === 'find:workflows');
  const insert = inRun.find((t) => t.name === 'insert:runs');
  const nodesStart = Math.min(...run.tasks.map((t) => t.start));
  const nodesEnd = Math.max(...run.tasks.map((t) => t.end));
  const save = inRun.filter((t) => t.start >= nodesEnd);
  if (!read || !insert || save.length === 0 || run.tasks.length === 0) return null;
  const saveEnd = Math.max(...save.map((t) => t.end));
  return [
    read.start - run.sent,
    read.end - read.start,
    insert.start - read.end,
    insert.end - insert.start,
    run.workflowStarted - insert.end,
    nodesStart - run.workflowStarted,
    nodesEnd - nodesStart,
    (save[0] as RoundTrip).start - nodesEnd,
    saveEnd - (save[0] as RoundTrip).start,
    run.answered - saveEnd,
  ];
}

/** Median milliseconds per stage, the median total, and how many runs it is over. */
export function timeline(
  runs: RunWindow[],
  trips: RoundTrip[],
): { stages: Array<[string, number]>; total: number; runs: number; saveTrips: number } {
  const rows = runs.map((r) => stagesOf(r, trips)).filter((r): r is number[] => r !== null);
  const saveTrips = median(
    runs.map(
      (r) => trips.filter((t) => t.start >= Math.max(...r.tasks.map((x) => x.end)) && t.end <= r.answered).length,
    ),
  );
  return {
    stages: STAGES.map((name, i) => [name, median(rows.map((r) => r[i] as number))]),
    total: median(runs.map((r) => r.answered - r.sent)),
    runs: rows.length,
    saveTrips,
  };
}

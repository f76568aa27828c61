import type { PauseRecord, PauseResolution, ProgressSave, TaskRecord, WaitReason } from './run-contract';
import type { RunStatus, TaskStatus } from './statuses';
import type { ApprovalDeliveryOutcome } from './approvals';
import { VALUE_REF_KEY, isValueRef } from './value-ref';
import { RUN_EVENT_NAMES, type RunEventName } from './run-event-names';

export { RUN_EVENT_NAMES, type RunEventName };

export const FINAL_EVENTS: readonly RunEventName[] = ['run.completed', 'run.failed', 'run.canceled'];
export const FINAL_EVENT_OF: Partial<Record<RunStatus, RunEventName>> = {
  COMPLETED: 'run.completed',
  FAILED: 'run.failed',
  CANCELED: 'run.canceled',
};

/**
 * Retention: a run keeps at most this many events, as long as the run itself. Past it, only the
 * final event is still stored (its slot is kept free), so a stream always ends.
 */
export const MAX_EVENTS_PER_RUN = 10_000;
/** A task.completed event carries outputs up to this size; larger ones are read from the run (by reference). */
export const EVENT_INLINE_BYTES = 16 * 1024;
/** A batch parent's progress event at most this often (the last one is never skipped). */
export const BATCH_PROGRESS_EVERY_MS = 1000;

export interface RunEvent {
  seq: number;
  event: RunEventName;
  data: Record<string, unknown>;
}

/**
 * What a run's stream has said so far (the head): every event is derived from a projection write
 * and this, so a retried write derives the same events with the same numbers.
 */
export interface EventHead {
  seq: number;
  status: RunStatus | null;
  /** Of the last write that carried tasks. */
  percentage: number;
  tasks: Record<string, TaskStatus>;
  /** Nodes waiting for a limit's slot, and the limit's key (absent in heads stored before there were limits). */
  waiting?: Record<string, string>;
  /** Why those nodes wait, where not for a slot (absent in heads stored before breakers). */
  waitingReasons?: Record<string, WaitReason>;
  /** The pauses open now, oldest first. */
  pauses: string[];
  /**
   * Every pause the run opened, oldest first: how reads find a run's pauses by `_id`
   * (src/db/runs/run-pauses.ts). Absent where the head cannot vouch for it: a head stored before
   * it was kept (a run started before), and one that saw a pause it did not list (an older worker's).
   */
  opened?: string[];
  final: boolean;
  batch: { total: number; done: number; failed: number; at: number } | null;
}

export const EMPTY_HEAD: EventHead = {
  seq: 0,
  status: null,
  percentage: 0,
  tasks: {},
  pauses: [],
  opened: [],
  final: false,
  batch: null,
};

/** One projection write, as the stream sees it. */
export type ProjectionChange =
  | { kind: 'progress'; save: ProgressSave; pause?: { opened: PauseRecord } | { resumed: PauseResolution } }
  | { kind: 'closed'; status: RunStatus; message: string | null; tasks: TaskRecord[] }
  /** A message with approval links was sent, or given up (approvals.ts). */
  | { kind: 'notification'; delivery: ApprovalDeliveryOutcome }
  /** A provider-batch run's provider batch was sent, or its state changed (provider-batch.activities.ts). */
  | { kind: 'stage'; stage: BatchStage }
  /** A batch parent's progress or end (`message` with a final status); `now` in ms, for the throttle. */
  | {
      kind: 'batch';
      status?: RunStatus;
      message?: string | null;
      total?: number;
      done?: number;
      failed?: number;
      now: number;
    };

/** One provider batch of a provider-batch run, as its `batch.stage` event tells it. */
export interface BatchStage {
  round: number;
  node_id: string;
  provider: string;
  batch_id: string;
  /** The provider's word for its state (`validating`, `in_progress`, `completed`, `ended`, …). */
  status: string;
  requests: number;
  succeeded: number;
  failed: number;
}

type Draft = Omit<RunEvent, 'seq'>;

/** The events a write adds to the stream, and the head after them. Pure. */
export function deriveEvents(
  runId: string,
  head: EventHead,
  change: ProjectionChange,
): { events: RunEvent[]; head: EventHead } {
  if (head.final) return { events: [], head };
  const next: EventHead = {
    ...head,
    tasks: { ...head.tasks },
    waiting: { ...head.waiting },
    ...(head.waitingReasons ? { waitingReasons: { ...head.waitingReasons } } : {}),
    pauses: [...head.pauses],
    ...(head.opened ? { opened: [...head.opened] } : {}),
  };
  const drafts: Draft[] = [];
  if (change.kind === 'progress') progressEvents(runId, next, change, drafts);
  else if (change.kind === 'closed') {
    if (change.tasks.length > 0) next.percentage = percentOf(change.tasks);
    runStatusEvents(runId, next, change.status, change.message, next.percentage, drafts);
  } else if (change.kind === 'notification') {
    drafts.push({ event: 'pause.notification', data: { run_id: runId, ...change.delivery } });
  } else if (change.kind === 'stage') {
    drafts.push({ event: 'batch.stage', data: { run_id: runId, ...change.stage } });
  } else batchEvents(runId, next, change, drafts);
  return number(next, head.seq, drafts);
}

function progressEvents(
  runId: string,
  next: EventHead,
  change: Extract<ProjectionChange, { kind: 'progress' }>,
  drafts: Draft[],
): void {
  const { save, pause } = change;
  const records = save.tasks?.records;
  if (records) next.percentage = percentOf(records);
  // A run that goes on says so first (RUNNING before its tasks start); one that ends, last.
  const status = save.run?.status;
  const ends = status !== undefined && FINAL_EVENT_OF[status] !== undefined;
  if (status && !ends) runStatusEvents(runId, next, status, save.run?.message ?? null, next.percentage, drafts);
  // A resolved pause says so before the tasks it lets go on (the pause's own task, the next node).
  if (pause && 'resumed' in pause && next.pauses.includes(pause.resumed.pauseId)) {
    const r = pause.resumed;
    next.pauses = next.pauses.filter((id) => id !== r.pauseId);
    if (next.opened && !next.opened.includes(r.pauseId)) delete next.opened;
    drafts.push({
      event: 'run.resumed',
      data: {
        run_id: runId,
        pause_id: r.pauseId,
        resume_action: r.action,
        resume_user_id: r.userId,
        comments: r.comments,
        resume_time: r.resumeTime,
      },
    });
  }
  if (records) taskEvents(runId, next, records, drafts);
  if (pause && 'opened' in pause && !next.pauses.includes(pause.opened.pauseId)) {
    const p = pause.opened;
    next.pauses.push(p.pauseId);
    next.opened?.push(p.pauseId);
    drafts.push({
      event: 'run.paused',
      data: {
        run_id: runId,
        pause: {
          id: p.pauseId,
          node_id: p.nodeId,
          pause_message: p.message,
          pause_time: p.pauseTime,
          input_data: inline(p.input),
        },
      },
    });
  }
  if (status && ends) runStatusEvents(runId, next, status, save.run?.message ?? null, next.percentage, drafts);
}

function taskEvents(runId: string, next: EventHead, records: TaskRecord[], drafts: Draft[]): void {
  for (const t of records) {
    waitingEvent(runId, next, t, drafts);
    const before = next.tasks[t.node_id];
    if (before === t.status) continue;
    next.tasks[t.node_id] = t.status;
    const task = { run_id: runId, node_id: t.node_id, task_id: t.id };
    const started = before !== undefined && before !== 'PENDING';
    if (!started && t.status !== 'PENDING' && t.status !== 'CANCELED')
      drafts.push({ event: 'task.started', data: { ...task, start_time: t.start_time } });
    if (t.status === 'COMPLETED')
      drafts.push({ event: 'task.completed', data: { ...task, end_time: t.end_time, ...outputsField(t.outputs) } });
    if (t.status === 'FAILED')
      drafts.push({ event: 'task.failed', data: { ...task, end_time: t.end_time, error: t.error } });
  }
}

/** Waits that end at a time (a WaitNode's timer, a WaitForCallbackNode's deadline), not at a limit's slot. */
const TIMED_WAITS: ReadonlySet<WaitReason> = new Set(['timer', 'callback']);

/**
 * A node starts waiting for a limit's slot, or for its breaker, its timer or its callback (once per wait and reason: a wait
 * for a slot that the breaker's opening parks is told again; a running task only).
 */
function waitingEvent(runId: string, next: EventHead, t: TaskRecord, drafts: Draft[]): void {
  const waiting = (next.waiting ??= {});
  const key = t.status === 'RUNNING' ? (t.waiting_for ?? null) : null;
  const reason: WaitReason = t.waiting_reason ?? 'limit';
  const told = next.waitingReasons?.[t.node_id] ?? 'limit';
  if (key === (waiting[t.node_id] ?? null) && (key === null || reason === told)) return;
  if (next.waitingReasons) delete next.waitingReasons[t.node_id];
  if (key === null) {
    delete waiting[t.node_id];
    return;
  }
  waiting[t.node_id] = key;
  if (reason !== 'limit') (next.waitingReasons ??= {})[t.node_id] = reason;
  // A limit's wait names its limit; a timer's or a callback's says until when.
  const what = TIMED_WAITS.has(reason) ? { until: t.waiting_until ?? null } : { limit_key: key };
  drafts.push({
    event: 'task.waiting',
    data: { run_id: runId, node_id: t.node_id, task_id: t.id, ...what, reason },
  });
}

/**
 * A status change (with the percentage the run shows then: completed tasks, or a batch's rows
 * ended), then the final event once the run has ended.
 */
function runStatusEvents(
  runId: string,
  next: EventHead,
  status: RunStatus,
  message: string | null,
  percentage: number,
  drafts: Draft[],
): void {
  if (status !== next.status) {
    drafts.push({ event: 'run.status', data: { run_id: runId, status, percentage_complete: percentage, message } });
    next.status = status;
  }
  const final = FINAL_EVENT_OF[status];
  if (final) {
    drafts.push({ event: final, data: { run_id: runId, status, message, percentage_complete: percentage } });
    next.final = true;
  }
}

function batchEvents(
  runId: string,
  next: EventHead,
  change: Extract<ProjectionChange, { kind: 'batch' }>,
  drafts: Draft[],
): void {
  const before = next.batch ?? { total: 0, done: 0, failed: 0, at: 0 };
  const seen = {
    total: change.total ?? before.total,
    done: change.done ?? before.done,
    failed: change.failed ?? before.failed,
  };
  const ending = change.status !== undefined && FINAL_EVENT_OF[change.status] !== undefined;
  const moved = seen.done !== before.done || seen.failed !== before.failed;
  if (moved && (ending || seen.done >= seen.total || change.now - before.at >= BATCH_PROGRESS_EVERY_MS)) {
    drafts.push({
      event: 'batch.progress',
      data: { run_id: runId, rows_total: seen.total, rows_done: seen.done, rows_failed: seen.failed },
    });
    next.batch = { ...seen, at: change.now };
  } else next.batch = { ...before, total: seen.total };
  next.percentage = seen.total > 0 ? (100 * seen.done) / seen.total : 0;
  if (change.status) runStatusEvents(runId, next, change.status, change.message ?? null, next.percentage, drafts);
}

/** Numbers the drafts after `seq`; near the bound only the final event is kept (MAX_EVENTS_PER_RUN). */
function number(next: EventHead, seq: number, drafts: Draft[]): { events: RunEvent[]; head: EventHead } {
  const events: RunEvent[] = [];
  for (const d of drafts) {
    const isFinal = FINAL_EVENTS.includes(d.event);
    if (!isFinal && seq >= MAX_EVENTS_PER_RUN - 1) continue;
    events.push({ seq: ++seq, ...d });
  }
  return { events, head: { ...next, seq } };
}

/** Completed tasks over all tasks, as GET /run/{id}/ computes it. */
function percentOf(tasks: TaskRecord[]): number {
  return tasks.length === 0 ? 0 : (100 * tasks.filter((t) => t.status === 'COMPLETED').length) / tasks.length;
}

const utf8 = new TextEncoder();

/**
 * The size of `value` as a reader gets it: a stored value counts at its stored size, so a ref
 * (150 bytes standing for 50 MB) never makes an event carry what it stands for. A ref's own JSON
 * counts when larger (user data of the ref's shape, unsealed, is sent as it is).
 */
function jsonBytes(value: unknown): number {
  let stored = 0;
  const text =
    JSON.stringify(value, (_key, v: unknown) => {
      if (isValueRef(v)) stored += Math.max(0, v[VALUE_REF_KEY].bytes - utf8.encode(JSON.stringify(v)).length);
      return v;
    }) ?? '';
  return utf8.encode(text).length + stored;
}

/** A value small enough for an event, else null (the run record has it: GET /api/run/{id}/). */
function inline(value: unknown): unknown {
  return jsonBytes(value) <= EVENT_INLINE_BYTES ? value : null;
}

function outputsField(outputs: TaskRecord['outputs']): Record<string, unknown> {
  const bytes = jsonBytes(outputs);
  return bytes <= EVENT_INLINE_BYTES
    ? { outputs, outputs_by_reference: false }
    : { outputs: null, outputs_by_reference: true, outputs_bytes: bytes };
}

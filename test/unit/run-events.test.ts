import assert from 'node:assert/strict';
import {
  EMPTY_HEAD,
  MAX_EVENTS_PER_RUN,
  type EventHead,
  type ProjectionChange,
  deriveEvents,
} from '../../src/engine/run-events';
import type { TaskRecord } from '../../src/engine/run-contract';
import type { TaskStatus } from '../../src/engine/statuses';
import { RUN_EVENT_DATA } from '../../src/modules/runs/run-events.schemas';

const task = (nodeId: string, status: TaskStatus, outputs: Record<string, unknown> | null = null): TaskRecord => ({
  id: `T-${nodeId}`,
  node_id: nodeId,
  status,
  inputs: {},
  outputs,
  error: status === 'FAILED' ? 'boom' : null,
  start_time: '2026-01-01T00:00:00Z',
  end_time: status === 'RUNNING' ? null : '2026-01-01T00:00:01Z',
  subworkflow_output: null,
});
const progress = (tasks: TaskRecord[], status?: 'RUNNING' | 'COMPLETED' | 'FAILED'): ProjectionChange => ({
  kind: 'progress',
  save: { runId: 'R1', tasks: { records: tasks }, ...(status ? { run: { status, message: null } } : {}) },
});

/** Applies writes one after another, as the store does, returning every event. */
function stream(changes: ProjectionChange[], head: EventHead = EMPTY_HEAD) {
  const all = [];
  for (const change of changes) {
    const out = deriveEvents('R1', head, change);
    all.push(...out.events);
    head = out.head;
  }
  return { events: all, head };
}

describe('run events: derived from projection writes', () => {
  it('a retried write (same head, same change) derives the same events under the same numbers; after it, nothing more', () => {
    const change = progress([task('a', 'COMPLETED', { x: 1 }), task('b', 'RUNNING')], 'RUNNING');
    const first = deriveEvents('R1', EMPTY_HEAD, change);
    assert.deepEqual(deriveEvents('R1', EMPTY_HEAD, change), first);
    assert.deepEqual(
      first.events.map((e) => [e.seq, e.event]),
      [
        [1, 'run.status'],
        [2, 'task.started'],
        [3, 'task.completed'],
        [4, 'task.started'],
      ],
    );
    assert.deepEqual(deriveEvents('R1', first.head, change).events, []);
  });

  it('a write that was lost between two others is not skipped: the next write says what changed since the head', () => {
    const { events } = stream([progress([task('a', 'RUNNING')], 'RUNNING'), progress([task('a', 'FAILED')], 'FAILED')]);
    assert.deepEqual(
      events.map((e) => e.event),
      ['run.status', 'task.started', 'task.failed', 'run.status', 'run.failed'],
    );
    for (const e of events) assert.ok(RUN_EVENT_DATA[e.event].safeParse(e.data).success, e.event);
  });

  it('a pause resolved in the same write as the next node starting says run.resumed before the tasks it lets go on', () => {
    const opened = {
      runId: 'R1',
      nodeId: 'gate',
      pauseId: 'R1:p1',
      message: 'ok?',
      pauseTime: '2026-01-01T00:00:00Z',
      input: {},
    };
    const paused: ProjectionChange = {
      kind: 'progress',
      save: {
        runId: 'R1',
        tasks: { records: [task('gate', 'PAUSED')] },
        run: { status: 'PAUSED', message: null },
      },
      pause: { opened },
    };
    const resumed: ProjectionChange = {
      kind: 'progress',
      save: {
        runId: 'R1',
        tasks: { records: [task('gate', 'COMPLETED'), task('next', 'RUNNING')] },
        run: { status: 'RUNNING', message: null },
      },
      pause: {
        resumed: {
          pauseId: 'R1:p1',
          action: 'APPROVE',
          userId: 'ana',
          comments: null,
          resumeTime: '2026-01-01T00:00:02Z',
        },
      },
    };
    const { events } = stream([paused, resumed]);
    assert.deepEqual(
      events.map((e) => e.event),
      ['run.status', 'task.started', 'run.paused', 'run.status', 'run.resumed', 'task.completed', 'task.started'],
    );
  });

  it('large outputs go by reference; nothing follows the final event', () => {
    const big = { text: 'x'.repeat(20_000) };
    const { events, head } = stream([progress([task('a', 'COMPLETED', big)], 'COMPLETED')]);
    const completed = events.find((e) => e.event === 'task.completed');
    assert.deepEqual(completed?.data, {
      run_id: 'R1',
      node_id: 'a',
      task_id: 'T-a',
      end_time: '2026-01-01T00:00:01Z',
      outputs: null,
      outputs_by_reference: true,
      outputs_bytes: JSON.stringify(big).length,
    });
    assert.equal(head.final, true);
    assert.deepEqual(
      deriveEvents('R1', head, { kind: 'closed', status: 'CANCELED', message: null, tasks: [] }).events,
      [],
    );
  });

  it('batch.progress at most once a second, the last one always', () => {
    const b = (done: number, now: number, status?: 'RUNNING' | 'COMPLETED'): ProjectionChange => ({
      kind: 'batch',
      total: 10,
      done,
      failed: 0,
      now,
      ...(status ? { status } : {}),
    });
    const { events } = stream([
      b(0, 0, 'RUNNING'),
      b(2, 1000),
      b(3, 1500),
      b(5, 2100),
      b(9, 2200),
      b(10, 2300),
      b(10, 2400, 'COMPLETED'),
    ]);
    assert.deepEqual(
      events.map((e) => (e.event === 'batch.progress' ? `p${e.data.rows_done}` : e.event)),
      ['run.status', 'p2', 'p5', 'p10', 'run.status', 'run.completed'],
    );
  });

  it('keeps at most MAX_EVENTS_PER_RUN events, the final one always among them', () => {
    const near: EventHead = { ...EMPTY_HEAD, seq: MAX_EVENTS_PER_RUN - 1, status: 'RUNNING' };
    const { events } = stream([progress([task('a', 'COMPLETED')], 'COMPLETED')], near);
    assert.deepEqual(
      events.map((e) => [e.seq, e.event]),
      [[MAX_EVENTS_PER_RUN, 'run.completed']],
    );
  });
});

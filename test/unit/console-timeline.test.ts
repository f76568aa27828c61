import assert from 'node:assert/strict';
import { timelineOf } from '../../console/src/timeline';
import type { Task } from '../../console/src/types';

const task = (over: Partial<Task> & Pick<Task, 'node_id' | 'status'>): Task =>
  ({
    id: `T-${over.node_id}`,
    run_id: 'R1',
    parent_task_id: null,
    inputs: null,
    outputs: null,
    error: null,
    start_time: null,
    end_time: null,
    subworkflow: null,
    subworkflow_output: null,
    usage: null,
    waiting_for: null,
    waiting_reason: null,
    waiting_until: null,
    waited_ms: 0,
    failed_attempts: [],
    ...over,
  }) as Task;

describe("console timeline: a run's tasks on one time axis", () => {
  const t0 = Date.parse('2026-12-04T10:00:00Z');
  const at = (s: number) => new Date(t0 + s * 1000).toISOString();

  it('one row per started task in start order (a task with only an end: a mark there); a wait for a slot comes before the run; unstarted tasks have no row', () => {
    const line = timelineOf(
      {
        start_time: at(0),
        end_time: at(10),
        tasks: [
          task({ node_id: 'b', status: 'COMPLETED', start_time: at(2), end_time: at(9), waited_ms: 3000 }),
          task({ node_id: 'a', status: 'COMPLETED', start_time: at(0.5), end_time: at(2) }),
          task({ node_id: 'in', status: 'COMPLETED', end_time: at(0) }),
          task({ node_id: 'c', status: 'PENDING' }),
        ],
      },
      t0 + 60_000,
    );
    assert.deepEqual([line.fromMs, line.toMs], [t0, t0 + 10_000]);
    assert.deepEqual(
      line.rows.map((r) => [r.nodeId, r.bars.map((b) => [b.kind, (b.startMs - t0) / 1000, (b.endMs - t0) / 1000])]),
      [
        ['in', [['run', 0, 0]]],
        ['a', [['run', 0.5, 2]]],
        [
          'b',
          [
            ['wait', 2, 5],
            ['run', 5, 9],
          ],
        ],
      ],
    );
  });

  it('a paused task and a task waiting on a timer reach now while the run goes on, drawn as a pause and a wait', () => {
    const now = t0 + 30_000;
    const line = timelineOf(
      {
        start_time: at(0),
        end_time: null,
        tasks: [
          task({ node_id: 'gate', status: 'PAUSED', start_time: at(5) }),
          task({
            node_id: 'sleep',
            status: 'RUNNING',
            start_time: at(6),
            waiting_reason: 'timer',
            waiting_for: 'timer',
          }),
        ],
      },
      now,
    );
    assert.deepEqual(
      line.rows.map((r) => r.bars.map((b) => [b.kind, (b.endMs - t0) / 1000, b.note])),
      [[['pause', 30, 'paused for a person']], [['wait', 30, 'waits: timer']]],
    );
    assert.equal(line.toMs, now);
  });

  it('each failed attempt is a bar before the attempt that answered; a lost worker’s is a mark at its end; a failed task is its last attempt', () => {
    const line = timelineOf(
      {
        start_time: at(0),
        end_time: at(20),
        tasks: [
          task({
            node_id: 'retried',
            status: 'COMPLETED',
            start_time: at(6),
            end_time: at(8),
            failed_attempts: [
              { attempt: 1, start_time: at(1), end_time: at(2), error: 'HTTP 503' },
              { attempt: 2, start_time: null, end_time: at(5), error: 'The worker running it was lost' },
            ],
          }),
          task({
            node_id: 'gave-up',
            status: 'FAILED',
            start_time: at(9),
            end_time: at(14),
            failed_attempts: [
              { attempt: 1, start_time: at(9.5), end_time: at(10), error: 'HTTP 500' },
              { attempt: 2, start_time: at(12), end_time: at(14), error: 'HTTP 500' },
            ],
          }),
        ],
      },
      t0 + 60_000,
    );
    assert.deepEqual(
      line.rows.map((r) => [r.nodeId, r.bars.map((b) => [b.kind, (b.startMs - t0) / 1000, (b.endMs - t0) / 1000])]),
      [
        [
          'retried',
          [
            ['attempt', 1, 2],
            ['attempt', 5, 5],
            ['run', 6, 8],
          ],
        ],
        [
          'gave-up',
          [
            ['attempt', 9.5, 10],
            ['attempt', 12, 14],
          ],
        ],
      ],
    );
    assert.match(line.rows[0]?.bars[0]?.note ?? '', /^attempt 1 failed: HTTP 503$/);
  });
});

import assert from 'node:assert/strict';
import { createRunEvents } from '../../src/db/runs/run-events';
import { createRunProjection } from '../../src/db/runs/run-projection';
import { runDocument } from '../../src/db/runs/run-documents';
import type { ProgressSave, StartSave, TaskRecord } from '../../src/engine/run-contract';
import { startApi, type TestApi } from '../support/api';
import { assertWholeStream, openSse } from '../support/sse';

const task = (status: TaskRecord['status'], nodeId = 'a'): TaskRecord => ({
  id: `T-${nodeId}`,
  node_id: nodeId,
  status,
  inputs: {},
  outputs: status === 'COMPLETED' ? { y: 1 } : null,
  error: null,
  start_time: '2026-01-01T00:00:00.000Z',
  end_time: status === 'COMPLETED' ? '2026-01-01T00:00:01.000Z' : null,
  subworkflow_output: null,
});

/**
 * The stream's head is saved on the run document in the same update as the write it describes;
 * the events follow. These are the projection's own writes (what the run workflow's local
 * activities call), against the real database, read back through GET /run/{id}/events/.
 */
describe('e2e: a run event stream whose head lives on the run document', function () {
  this.timeout(60_000);
  let api: TestApi;
  let seq = 0;
  before(async () => {
    api = await startApi();
  });
  after(() => api?.close());

  const projection = () => createRunProjection(api.models, createRunEvents(api.models));
  const running = (runId: string): ProgressSave => ({
    runId,
    tasks: { records: [task('RUNNING')], first: true },
    run: { status: 'RUNNING', message: null },
  });
  const done = (runId: string): ProgressSave => ({
    runId,
    tasks: { records: [task('COMPLETED')], first: false },
    run: { status: 'COMPLETED', message: null, final: { outputsByTitle: { a: { y: 1 } } } },
  });

  async function newRun(): Promise<string> {
    const wf = (await (
      await fetch(`${api.baseUrl}/wf/`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: `head-${Math.random()}` }),
      })
    ).json()) as { id: string };
    const id = `R9${String(++seq).padStart(5, '0')}`;
    await api.models.Run.create(
      runDocument({
        id,
        seq: 900_000 + seq,
        workflowId: wf.id,
        workflowVersionId: null,
        runType: 'interactive',
        initialInputs: {},
      }),
    );
    return id;
  }

  async function streamOf(runId: string) {
    const stream = await openSse(`${api.baseUrl}/run/${runId}/events/`);
    assert.equal(await stream.ended, true);
    assertWholeStream(stream.events);
    return stream.events.map(({ id, event, data }) => ({ id, event, data }));
  }

  it('a write retried after a crash between its run update and its events adds them once, under the same numbers', async () => {
    const [control, crashed] = [await newRun(), await newRun()];
    for (const runId of [control, crashed]) await projection().save(running(runId));
    // The crash: the run (and its head) was updated, the events were never inserted.
    await api.models.RunEvent.deleteMany({ run_id: crashed });
    const run = await api.models.Run.findById(crashed).lean();
    assert.equal(run?.status, 'RUNNING');
    // The local activity's retry writes the same save again, twice for good measure.
    await projection().save(running(crashed));
    await projection().save(running(crashed));
    for (const runId of [control, crashed]) await projection().save(done(runId));

    const [a, b] = [await streamOf(control), await streamOf(crashed)];
    assert.deepEqual(
      a.map((e) => `${e.id} ${e.event}`),
      ['1 run.status', '2 task.started', '3 task.completed', '4 run.status', '5 run.completed'],
    );
    assert.deepEqual(
      b,
      a.map((e) => ({ ...e, data: { ...e.data, run_id: crashed } })),
    );
    assert.equal(await api.models.RunEvent.countDocuments({ run_id: crashed }), 5);
  });

  // A slow node's activity shows it RUNNING (saveStart) while the workflow may save too.
  const tasksOf = async (runId: string) => (await projection().tasksOf(runId)).map((t) => `${t.node_id} ${t.status}`);
  const firstSave = (runId: string): ProgressSave => ({
    runId,
    tasks: { records: [task('COMPLETED'), task('PENDING', 'b')], first: true, writer: 'w:1' },
    run: { status: 'RUNNING', message: null },
  });
  const startOfB = (runId: string, after: string | null): StartSave => ({
    progress: { runId, tasks: { records: [task('COMPLETED'), task('RUNNING', 'b')], first: false, writer: 'w:2' } },
    after,
  });
  const endOfB = (runId: string, writer: string): ProgressSave => ({
    runId,
    tasks: { records: [task('COMPLETED'), task('COMPLETED', 'b')], first: false, writer },
    run: { status: 'COMPLETED', message: null, final: { outputsByTitle: {} } },
  });

  it('a start save shows the node RUNNING in the record and the stream when no save came after the one it follows', async () => {
    const runId = await newRun();
    await projection().save(firstSave(runId));
    await projection().saveStart(startOfB(runId, 'w:1'));
    assert.deepEqual(await tasksOf(runId), ['a COMPLETED', 'b RUNNING']);
    await projection().save(endOfB(runId, 'w:3'));
    assert.deepEqual(
      (await streamOf(runId)).map((e) => `${e.id} ${e.event} ${String(e.data.node_id ?? e.data.status ?? '')}`),
      [
        '1 run.status RUNNING',
        '2 task.started a',
        '3 task.completed a',
        '4 task.started b',
        '5 task.completed b',
        '6 run.status COMPLETED',
        '7 run.completed COMPLETED',
      ],
    );
  });

  it('start saves of two nodes one after the other both land: the second follows the first', async () => {
    const runId = await newRun();
    await projection().save(firstSave(runId));
    await projection().saveStart(startOfB(runId, 'w:1'));
    await projection().saveStart({
      progress: {
        runId,
        tasks: {
          records: [task('COMPLETED'), task('COMPLETED', 'b'), task('RUNNING', 'c')],
          first: false,
          writer: 'w:3',
        },
      },
      after: 'w:2',
    });
    assert.deepEqual(await tasksOf(runId), ['a COMPLETED', 'b COMPLETED', 'c RUNNING']);
  });

  it('a start save that comes after a later save of the workflow changes nothing', async () => {
    const runId = await newRun();
    await projection().save(firstSave(runId));
    // The workflow saved again (b ended; the run goes on) before the start save of b got through.
    await projection().save({
      runId,
      tasks: { records: [task('COMPLETED'), task('COMPLETED', 'b')], first: false, writer: 'w:2' },
    });
    const before = await api.models.Run.findById(runId).lean();
    await projection().saveStart(startOfB(runId, 'w:1'));
    assert.deepEqual(await tasksOf(runId), ['a COMPLETED', 'b COMPLETED']);
    assert.deepEqual(await api.models.Run.findById(runId).lean(), before);
    assert.deepEqual(
      (await api.models.RunEvent.find({ run_id: runId }).lean()).map((e) => `${e.seq} ${e.event}`).sort(),
      ['1 run.status', '2 task.started', '3 task.completed', '4 task.started', '5 task.completed'],
    );
  });

  it('a start save after a save the workflow has not labelled (a close by the api) changes nothing', async () => {
    const runId = await newRun();
    await projection().save(firstSave(runId));
    await projection().saveStart(startOfB(runId, 'w:0'));
    assert.deepEqual(await tasksOf(runId), ['a COMPLETED', 'b PENDING']);
    await projection().saveStart(startOfB(runId, null));
    assert.deepEqual(await tasksOf(runId), ['a COMPLETED', 'b PENDING']);
  });

  it("a write whose head moved after it was read writes nothing; the next save numbers its events after the other writer's", async () => {
    const runId = await newRun();
    await projection().save(firstSave(runId));
    const stale = await api.models.Run.findById(runId, { event_head: 1, event_head_before: 1 }).lean();
    // Another writer (the node's start save) moves the head: task.started b is event 4.
    await projection().saveStart(startOfB(runId, 'w:1'));
    const outcome = await createRunEvents(api.models).append(
      runId,
      { kind: 'progress', save: endOfB(runId, 'w:2') },
      { fields: { status: 'COMPLETED' }, stored: stale },
    );
    assert.equal(outcome, 'moved');
    assert.equal((await api.models.Run.findById(runId).lean())?.status, 'RUNNING', 'its fields not written');
    assert.equal(await api.models.RunEvent.countDocuments({ run_id: runId }), 4, 'nor its events');
    await projection().save(endOfB(runId, 'w:2'));
    assert.deepEqual(
      (await streamOf(runId)).map((e) => `${e.id} ${e.event}`),
      [
        '1 run.status',
        '2 task.started',
        '3 task.completed',
        '4 task.started',
        '5 task.completed',
        '6 run.status',
        '7 run.completed',
      ],
    );
  });

  it("a start save racing the workflow's saves never leaves its node's state over theirs (12 rounds)", async () => {
    for (let round = 0; round < 12; round++) {
      const runId = await newRun();
      await projection().save(firstSave(runId));
      // The workflow's failure save and its final save race the start save of the node.
      const failed: ProgressSave = {
        runId,
        tasks: { records: [task('COMPLETED'), task('FAILED', 'b')], first: false, writer: 'w:2' },
        run: { status: 'FAILED', message: 'b failed' },
      };
      await Promise.all([
        projection().saveStart(startOfB(runId, 'w:1')),
        projection()
          .save(failed)
          .then(() =>
            projection().save({
              ...failed,
              tasks: { records: [task('COMPLETED'), task('FAILED', 'b')], first: false, writer: 'w:3' },
              run: { status: 'FAILED', message: 'b failed', final: { outputsByTitle: {} } },
            }),
          ),
      ]);
      assert.deepEqual(await tasksOf(runId), ['a COMPLETED', 'b FAILED'], `round ${round}`);
      const events = await streamOf(runId);
      const b = events.filter((e) => e.data.node_id === 'b').map((e) => e.event);
      assert.equal(b.at(-1), 'task.failed', `round ${round}: ${b.join(',')}`);
      assert.equal((await api.models.Run.findById(runId).lean())?.status, 'FAILED');
    }
  });
});

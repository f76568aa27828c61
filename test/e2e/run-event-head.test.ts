import assert from 'node:assert/strict';
import { createRunEvents } from '../../src/db/runs/run-events';
import { createRunProjection } from '../../src/db/runs/run-projection';
import { runDocument } from '../../src/db/runs/run-documents';
import { TASKS_ON_RUN_MAX_CHARS } from '../../src/db/runs/run-task-reads';
import type { KnownRecord, ProgressSave, TaskRecord } from '../../src/engine/run-contract';
import { startApi, type TestApi } from '../support/api';
import { assertWholeStream, openSse } from '../support/sse';

const task = (status: TaskRecord['status']): TaskRecord => ({
  id: 'T1',
  node_id: 'a',
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
    tasks: { records: [task('RUNNING')] },
    run: { status: 'RUNNING', message: null },
  });
  const done = (runId: string): ProgressSave => ({
    runId,
    tasks: { records: [task('COMPLETED')] },
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

  /** What the run's workflow knows of its record after its last save (`head` null: never saved). */
  const knownAs = (saved: { head: string | null; tasks: number | null } | null): KnownRecord => ({
    head: saved?.head ?? null,
    tasks: saved?.tasks ?? null,
    workflowId: 'unused-by-these-saves',
    apiKey: 'none',
    startTime: '2026-01-01T00:00:00.000Z',
  });
  const headOf = async (runId: string) =>
    ((await api.models.Run.findById(runId, { event_head: 1 }).lean()) as { event_head: string | null }).event_head;
  const recordOf = async (runId: string) => {
    const res = await fetch(`${api.baseUrl}/run/${runId}/`);
    assert.equal(res.status, 200);
    const body = (await res.json()) as { status: string; tasks: TaskRecord[]; end_time: string | null };
    return {
      status: body.status,
      end_time: body.end_time,
      tasks: body.tasks.map((t) => `${t.node_id} ${t.status} ${JSON.stringify(t.outputs)}`),
    };
  };

  it('saves on what their workflow knows write what saves that read the run first write', async () => {
    const [read, known] = [await newRun(), await newRun()];
    for (const save of [running, done]) await projection().save(save(read));
    const first = await projection().save({ ...running(known), known: knownAs(null) });
    // An open run's small tasks are on its record: no version of a document of their own.
    assert.deepEqual(first, { head: await headOf(known), tasks: null }, 'the save answers with what it wrote');
    await projection().save({ ...done(known), known: knownAs(first) });
    const withoutEnd = async (runId: string) => ({ ...(await recordOf(runId)), end_time: undefined });
    assert.deepEqual(await withoutEnd(known), await withoutEnd(read));
    assert.equal((await recordOf(known)).status, 'COMPLETED');
    assert.deepEqual(
      await streamOf(known),
      (await streamOf(read)).map((e) => ({ ...e, data: { ...e.data, run_id: known } })),
    );
  });

  /** A save on a run the api closed first (its head moved): the record and its events unchanged; the tasks it shows after. */
  async function saveAfterClose(records: TaskRecord[]) {
    const runId = await newRun();
    await projection().cancelWithoutWorkflow(runId, ['PENDING']);
    const events = async () => api.models.RunEvent.countDocuments({ run_id: runId });
    const before = { record: await recordOf(runId), events: await events() };
    assert.equal(before.record.status, 'CANCELED');
    const saved = await projection().save({ ...running(runId), tasks: { records }, known: knownAs(null) });
    assert.equal(saved, null);
    const after = { record: await recordOf(runId), events: await events() };
    assert.equal(await api.models.RunTasks.exists({ _id: runId }), null, 'no task document is left behind');
    assert.deepEqual(
      { ...after, record: { ...after.record, tasks: [] } },
      { ...before, record: { ...before.record, tasks: [] } },
    );
    return after.record.tasks;
  }

  it('a save on a head that moved since (the api closed the run) leaves the record closed, its events as they were, and no task written', async () => {
    // Small tasks go with the run's update, which found the head moved: nothing was written.
    assert.deepEqual(await saveAfterClose([task('RUNNING')]), []);
  });

  it('a save of large tasks on a head that moved since leaves the record as the close left it', async () => {
    // Tasks too large for the record are written first; the run's head then says it had ended: they go again.
    const big = { ...task('RUNNING'), inputs: { text: 'x'.repeat(TASKS_ON_RUN_MAX_CHARS) } };
    assert.deepEqual(await saveAfterClose([big]), []);
  });

  it('saves of a workflow task run again after the run ended, on what was known then, change neither the record nor its events', async () => {
    const runId = await newRun();
    const first = await projection().save({ ...running(runId), known: knownAs(null) });
    await projection().save({ ...done(runId), known: knownAs(first) });
    const before = { record: await recordOf(runId), stream: await streamOf(runId) };
    assert.equal(before.record.status, 'COMPLETED');
    // The workflow task again: its first save on a run never saved, then its final save on what the first answered.
    const again = await projection().save({ ...running(runId), known: knownAs(null) });
    assert.equal(again, null, 'an ended record answers that nothing is known');
    await projection().save({
      ...done(runId),
      tasks: { records: [{ ...task('COMPLETED'), outputs: { y: 2 } }] },
      known: knownAs(first),
    });
    assert.deepEqual({ record: await recordOf(runId), stream: await streamOf(runId) }, before);
  });
});

import assert from 'node:assert/strict';
import { startEngine, type Engine } from '../support/engine';
import { input, l, n } from '../support/graphs';
import { runGraph } from '../support/run-graph';
import { TASKS_ON_RUN_MAX_CHARS } from '../../src/db/runs/run-task-reads';

/** in → py (returns `size` characters) → out: py is a slow node, so the run saves before it and at its end. */
const grows = (size: number) => ({
  nodes: [
    input(),
    n('py', 'PythonFuncNode', {
      code: `return {"y": "z" * ${size}}`,
      timeout_seconds: 60,
      heartbeat_timeout_seconds: 20,
      output_schema: { y: 'string' },
    }),
    n('out', 'OutputNode', { output_map: { y: 'py.y' } }),
  ],
  links: [l('in', 'py'), l('py', 'out')],
});

type Task = { node_id: string; status: string; outputs: { y?: string } | null };

describe("e2e: a run's tasks, on its record while small and in a document of their own once large", function () {
  this.timeout(120_000);
  let engine: Engine;
  before(async () => {
    engine = await startEngine();
  });
  after(() => engine?.close());

  /** Where the run's tasks are stored: on its record, in `run_tasks`, or both (stale on one side). */
  async function storedAt(runId: string): Promise<{ onRecord: boolean; apart: boolean }> {
    const run = await engine.api.models.Run.findById(runId, { tasks: 1 }).lean<{ tasks?: string | null }>();
    const apart = await engine.api.models.RunTasks.exists({ _id: runId });
    return { onRecord: typeof run?.tasks === 'string', apart: apart !== null };
  }

  /** The run's tasks as each read shows them: the record, its status, the workflow's list. */
  async function everyRead(runId: string, workflowId: string): Promise<Task[][]> {
    const [record, status, listed] = await Promise.all([
      engine.http.get(`/run/${runId}/`),
      engine.http.get(`/run/${runId}/status/`),
      engine.http.get(`/wf/${workflowId}/runs/`),
    ]);
    const inList = (listed.body as Array<{ id: string; tasks: Task[] }>).find((r) => r.id === runId);
    return [record.body.tasks, status.body.tasks, inList?.tasks ?? []];
  }

  const sorted = (tasks: Task[]) =>
    tasks
      .map((t) => [t.node_id, t.status, t.outputs?.y?.length ?? null] as const)
      .sort(([a], [b]) => a.localeCompare(b));

  it('a small run keeps them on its record (no document of their own), and every read shows them', async () => {
    const { record, wf } = await runGraph(engine, grows(10), { x: 'a' });
    assert.equal(record.status, 'COMPLETED');
    assert.deepEqual(await storedAt(record.id), { onRecord: true, apart: false });
    for (const tasks of await everyRead(record.id, wf.id))
      assert.deepEqual(sorted(tasks), [
        ['in', 'COMPLETED', null],
        ['out', 'COMPLETED', 10],
        ['py', 'COMPLETED', 10],
      ]);
  });

  it('tasks that outgrow the record mid-run move to their own document, and every read shows the latest', async () => {
    // The save before py fits on the record; the final one (py's output, out's input) does not.
    const size = TASKS_ON_RUN_MAX_CHARS;
    const { record, wf } = await runGraph(engine, grows(size), { x: 'b' });
    assert.equal(record.status, 'COMPLETED');
    assert.deepEqual(await storedAt(record.id), { onRecord: false, apart: true });
    for (const tasks of await everyRead(record.id, wf.id))
      assert.deepEqual(sorted(tasks), [
        ['in', 'COMPLETED', null],
        ['out', 'COMPLETED', size],
        ['py', 'COMPLETED', size],
      ]);
    assert.equal(record.outputs.out.y.length, size);
    // Their document goes with the run (its workflow's delete takes its runs).
    assert.equal((await engine.http.delete(`/wf/${wf.id}/`)).status, 204);
    assert.deepEqual(await storedAt(record.id), { onRecord: false, apart: false });
  });
});

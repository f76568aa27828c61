import assert from 'node:assert/strict';
import { waitForRun, type Engine } from '../support/engine';
import type { FakeLlmServer } from '../support/fake-llm-server';
import { input, l, n } from '../support/graphs';
import { startLlmEngine } from '../support/llm-engine';
import { TASKS_ON_RUN_MAX_CHARS } from '../../src/db/runs/run-task-reads';

const ask = n('ask', 'SingleLLMCallNode', {
  llm_info: { model: 'openai/gpt-4o-mini', max_tokens: 20 },
  user_message: 'say hi',
});

/** in → ask → out: small tasks. */
const small = {
  nodes: [input(), ask, n('out', 'OutputNode')],
  links: [l('in', 'ask'), l('ask', 'out')],
};

/** in → py (returns a string as long as an open run's tasks may be on its record) → ask → out. */
const large = {
  nodes: [
    input(),
    n('py', 'PythonFuncNode', {
      code: `return {"y": "z" * ${TASKS_ON_RUN_MAX_CHARS}}`,
      timeout_seconds: 60,
      heartbeat_timeout_seconds: 20,
      output_schema: { y: 'string' },
    }),
    ask,
    n('out', 'OutputNode'),
  ],
  links: [l('in', 'py'), l('py', 'ask'), l('ask', 'out')],
};

type Task = { node_id: string; status: string; outputs: { y?: string } | null };

describe("e2e: a run's tasks, on its record while it is open and small, in a document of their own otherwise", function () {
  this.timeout(120_000);
  let engine: Engine;
  let fake: FakeLlmServer;
  before(async () => {
    ({ engine, fake } = await startLlmEngine());
  });
  after(async () => {
    await engine?.close();
    await fake?.close();
  });

  /** Where the run's tasks are stored: on its record, in `run_tasks`. */
  async function storedAt(runId: string): Promise<{ onRecord: boolean; apart: boolean }> {
    const run = await engine.api.models.Run.findById(runId, { tasks: 1 }).lean<{ tasks?: string | null }>();
    const apart = await engine.api.models.RunTasks.exists({ _id: runId });
    return { onRecord: typeof run?.tasks === 'string', apart: apart !== null };
  }

  /** The run's tasks as each read shows them (the record, its status, the workflow's list): node, status, output length. */
  async function everyRead(runId: string, workflowId: string): Promise<Array<Array<[string, string, number | null]>>> {
    const [record, status, listed] = await Promise.all([
      engine.http.get(`/run/${runId}/`),
      engine.http.get(`/run/${runId}/status/`),
      engine.http.get(`/wf/${workflowId}/runs/`),
    ]);
    const inList = (listed.body as Array<{ id: string; tasks: Task[] }>).find((r) => r.id === runId);
    return [record.body.tasks, status.body.tasks, inList?.tasks ?? []].map((tasks: Task[]) =>
      tasks
        .map((t): [string, string, number | null] => [t.node_id, t.status, t.outputs?.y?.length ?? null])
        .sort(([a], [b]) => a.localeCompare(b)),
    );
  }

  /** Asserts every read shows the run's tasks as `expected` (sorted by node). */
  async function everyReadShows(runId: string, workflowId: string, expected: Array<[string, string, number | null]>) {
    for (const tasks of await everyRead(runId, workflowId)) assert.deepEqual(tasks, expected);
  }

  /** Starts `definition` with the model call held: resolves once the call is in flight, with its release. */
  async function startHeld(definition: unknown) {
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    fake.respondWith(() => ({ content: JSON.stringify({ output: 'hi' }), heldUntil: held }));
    const wf = (await engine.http.post('/wf/', { name: `tasks-${Math.random()}`, definition })).body;
    const started = await engine.http.post(`/wf/${wf.id}/start_run/`, { initial_inputs: { in: { x: 'a' } } });
    assert.equal(started.status, 200, started.text);
    const runId: string = started.body.id;
    await waitForRun(engine.http, runId, (r) =>
      (r as unknown as { tasks: Task[] }).tasks.some((t) => t.node_id === 'ask' && t.status === 'RUNNING'),
    );
    return { runId, workflowId: wf.id as string, release };
  }

  it('an open run keeps small tasks on its record; its end moves them to their own document; every read shows them', async () => {
    const { runId, workflowId, release } = await startHeld(small);
    try {
      assert.deepEqual(await storedAt(runId), { onRecord: true, apart: false });
      await everyReadShows(runId, workflowId, [
        ['ask', 'RUNNING', null],
        ['in', 'COMPLETED', null],
        ['out', 'PENDING', null],
      ]);
    } finally {
      release();
    }
    assert.equal((await waitForRun(engine.http, runId)).status, 'COMPLETED');
    assert.deepEqual(await storedAt(runId), { onRecord: false, apart: true });
    await everyReadShows(runId, workflowId, [
      ['ask', 'COMPLETED', null],
      ['in', 'COMPLETED', null],
      ['out', 'COMPLETED', null],
    ]);
  });

  it('tasks that outgrow the record while the run is open move to their own document, and every read shows the latest', async () => {
    // The save before py fits on the record; the one before ask (py's output, ask's input) does not.
    const { runId, workflowId, release } = await startHeld(large);
    try {
      assert.deepEqual(await storedAt(runId), { onRecord: false, apart: true });
      await everyReadShows(runId, workflowId, [
        ['ask', 'RUNNING', null],
        ['in', 'COMPLETED', null],
        ['out', 'PENDING', null],
        ['py', 'COMPLETED', TASKS_ON_RUN_MAX_CHARS],
      ]);
    } finally {
      release();
    }
    assert.equal((await waitForRun(engine.http, runId)).status, 'COMPLETED');
    await everyReadShows(runId, workflowId, [
      ['ask', 'COMPLETED', null],
      ['in', 'COMPLETED', null],
      ['out', 'COMPLETED', null],
      ['py', 'COMPLETED', TASKS_ON_RUN_MAX_CHARS],
    ]);
    // Their document goes with the run (its workflow's delete takes its runs).
    assert.equal((await engine.http.delete(`/wf/${workflowId}/`)).status, 204);
    assert.deepEqual(await storedAt(runId), { onRecord: false, apart: false });
  });
});

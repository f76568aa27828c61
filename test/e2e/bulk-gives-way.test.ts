import assert from 'node:assert/strict';
import { startEngine, waitForRun, type Engine } from '../support/engine';
import { type FakeLlmServer, mostAtOnce, startFakeLlmServer } from '../support/fake-llm-server';
import { l, n } from '../support/graphs';
import { setEnv } from '../support/integration-runs';
import { twoVersions, waitForEval } from '../support/evals';

/** A's rows: one model call each. */
const oneCall = {
  nodes: [
    n('in', 'InputNode', { output_schema: { x: 'string' } }),
    n('ask', 'SingleLLMCallNode', {
      llm_info: { model: 'openai/gpt-4o-mini', max_tokens: 5 },
      user_message: 'row {{in.x}}',
    }),
    n('out', 'OutputNode', { output_map: { answer: 'ask.output' } }),
  ],
  links: [l('in', 'ask'), l('ask', 'out')],
};

/** B's run: no model call, only the main queue's workflow tasks and activities. */
const echo = {
  nodes: [
    n('in', 'InputNode', { output_schema: { x: 'string' } }),
    n('out', 'OutputNode', { output_map: { y: 'in.x' } }),
  ],
  links: [l('in', 'out')],
};

const ROWS = 12;

/**
 * A target no host stays under (1% of its CPU) makes "the host is busy" always true, so what is left
 * to decide is whether anything needs the room: with runs on the main queue, bulk work stays at its
 * floor (two at a time); alone, it takes more.
 */
describe('e2e: bulk work gives way to the main queue on a busy host, and takes the host when alone', function () {
  this.timeout(180_000);
  let engine: Engine;
  let llm: FakeLlmServer;
  let batchWorkflow: string;
  let interactiveWorkflow: string;
  let dataset: string;

  before(async () => {
    engine = await startEngine({ SPUR_BULK_TARGET_CPU: '0.01' });
    llm = await startFakeLlmServer();
    llm.respondWith(() => ({ content: JSON.stringify({ output: 'ok' }), delayMs: 400 }));
    await setEnv(engine, { OPENAI_API_BASE: `${llm.url}/v1`, OPENAI_API_KEY: 'sk-bulk' });
    batchWorkflow = (await engine.http.post('/wf/', { name: 'A rows', definition: oneCall })).body.id;
    interactiveWorkflow = (await engine.http.post('/wf/', { name: 'B runs', definition: echo })).body.id;
    const csv = ['x', ...Array.from({ length: ROWS }, (_, i) => `r${i}`)].join('\n');
    const fd = new FormData();
    fd.append('file', new Blob([csv], { type: 'text/csv' }), 'rows.csv');
    dataset = (await engine.http.post('/ds/?name=bulk-rows', fd)).body.id;
  });
  after(async () => {
    await engine?.close();
    await llm?.close();
  });

  /** A blocking run of B's: main-queue work, answered 200. */
  async function interactiveRun(): Promise<void> {
    const ran = await engine.http.post(`/wf/${interactiveWorkflow}/run/`, { initial_inputs: { in: { x: 'b' } } });
    assert.equal(ran.status, 200, ran.text);
  }

  /**
   * Keeps the main queue busy until `work` settles: B's blocking runs in three lanes, so a task of
   * theirs starts well within the pacer's quiet window even when one run is slow on a loaded host
   * (a single lane let the window lapse under a full suite's load, and bulk work rightly grew).
   */
  async function whileMainQueueBusy<T>(work: Promise<T>): Promise<T> {
    let ended = false;
    const settled = work.finally(() => (ended = true));
    const lane = async () => {
      while (!ended) await interactiveRun();
    };
    await Promise.all([settled.catch(() => undefined), lane(), lane(), lane()]);
    return settled;
  }

  /** A's batch of ROWS rows, all allowed at once; the most model calls it had out at the same moment. */
  async function batchCallsAtOnce(busy: boolean): Promise<number> {
    llm.requests.length = 0;
    const batch = await engine.http.post(`/wf/${batchWorkflow}/start_batch_run/`, {
      dataset_id: dataset,
      mini_batch_size: ROWS,
    });
    assert.equal(batch.status, 200, batch.text);
    const done = waitForRun(engine.http, batch.body.id);
    assert.equal((await (busy ? whileMainQueueBusy(done) : done)).status, 'COMPLETED');
    assert.equal(llm.requests.length, ROWS, 'every row called the model once');
    return mostAtOnce(llm.requests);
  }

  it('alone on the host, an inline batch runs more than two rows at a time', async () => {
    const most = await batchCallsAtOnce(false);
    assert.ok(most > 2, `${most} calls at once`);
  });

  it('while runs someone waits on keep the main queue busy, the same batch has at most two rows out at a time', async () => {
    // B's runs start before the batch and go on until it has ended.
    for (let i = 0; i < 3; i++) await interactiveRun();
    const most = await batchCallsAtOnce(true);
    assert.ok(most <= 2, `${most} calls at once`);
  });

  it('three evals launched together complete while runs keep the main queue busy: their scorers, which wait on the rows, leave the rows the floor', async () => {
    const { suite, workflowId } = await twoVersions(engine.http, 'floor evals');
    const launched: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await engine.http.post('/evals/launch/', {
        workflow_id: workflowId,
        eval_name: suite.name,
        output_variable: 'out-answer',
        num_samples: 6,
      });
      assert.equal(res.status, 200, res.text);
      launched.push(res.body.run_id);
    }
    const ended = await whileMainQueueBusy(
      Promise.all(launched.map((id) => waitForEval(engine.http, id, undefined, 120_000))),
    );
    for (const run of ended) assert.equal(run.status, 'COMPLETED', JSON.stringify(run));
  });
});

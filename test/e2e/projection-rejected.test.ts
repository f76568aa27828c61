import assert from 'node:assert/strict';
import { SpurRunStatus } from '../../src/contracts/search-attributes';
import { runWorkflowId } from '../../src/contracts/workflow-names';
import { type Engine, waitForRun } from '../support/engine';
import type { FakeLlmServer } from '../support/fake-llm-server';
import { l, n } from '../support/graphs';
import { startLlmEngine } from '../support/llm-engine';
import { until } from '../support/exec-log';
import { runWorkflowReport } from '../support/run-history';

/** Values up to this size stay inline in the run's records (the largest SPUR_VALUE_REF_BYTES allows). */
const INLINE = 1024 * 1024;
/** Each node's output: small enough that three arriving together stay under Temporal's 2 MB buffer. */
const SIZE = 600 * 1024;
/** Enough such outputs that the run's one task document is over the 16 MiB document limit. */
const NODES = 30;
/** Seconds each node sleeps: with one sandbox, its result comes that long after the one before. */
const SLEEP = 3;

/**
 * src → p0 … p29, each returning a 600 KiB string, one sandbox at a time (SPUR_PYTHON_MAX_CONCURRENT=1),
 * so the results are at least SLEEP seconds apart however late each process starts. Results that
 * arrive while a workflow task runs wait in Temporal's buffer of new events, and past 2 MB the server
 * closes that task (FORCE_CLOSE_COMMAND, then UNHANDLED_COMMAND for the retried one); a workflow task
 * here saves a task document of several MB, which a loaded CI run drew out past the gap. With 1 MiB
 * results two seconds apart that happened even in passing runs, and once the retried tasks, each
 * saving the document again, kept the run from ending in 420 s. Now four results would have to
 * arrive within one workflow task: one that lasts over nine seconds.
 * (A chain of nodes cannot stand in: its history passes Temporal's continue-as-new suggestion after a
 * few MB, and the run then starts no node until the call held beside it returns.)
 */
/**
 * Beside them a model call the provider holds unanswered, in flight when the record is refused: a run
 * that stops at the refusal cancels it; one that went on would wait for its answer (up to its 280 s).
 */
const definition = {
  nodes: [
    n('src', 'InputNode', { output_schema: { x: 'string' } }),
    n('ask', 'SingleLLMCallNode', { llm_info: { model: 'openai/gpt-4o-mini', max_tokens: 20 }, user_message: 'hi' }),
    ...Array.from({ length: NODES }, (_, i) =>
      n(`p${i}`, 'PythonFuncNode', {
        code: `import time\ntime.sleep(${SLEEP})\nreturn {"s": "${i % 10}" * ${SIZE}}`,
        // All of them start together and wait for the one sandbox, their clocks running: none may
        // time out (and be tried again) while it waits.
        timeout_seconds: 900,
        max_retries: 0,
        // A regular activity: a short call (a local activity) keeps at most 16 KB of its output
        // inline, so its record could not grow past the limit this way.
        heartbeat_timeout_seconds: 20,
        output_schema: { s: 'string' },
      }),
    ),
  ],
  links: [l('src', 'ask'), ...Array.from({ length: NODES }, (_, i) => l('src', `p${i}`))],
};

describe('e2e: a run whose record the database refuses for good fails, end to end', function () {
  this.timeout(660_000);
  let engine: Engine;
  let fake: FakeLlmServer;
  /** Settles as the file ends: the held call is answered only then (if anyone still waits for it). */
  let close: () => void = () => undefined;
  const closing = new Promise<void>((resolve) => (close = resolve));
  before(async () => {
    ({ engine, fake } = await startLlmEngine({
      SPUR_VALUE_REF_BYTES: String(INLINE),
      SPUR_PYTHON_MAX_CONCURRENT: '1',
    }));
  });
  after(async () => {
    close();
    await engine?.close();
    await fake?.close();
  });

  it('ends FAILED saying its record could not be saved, its workflow closes instead of retrying the write, and the call in flight is stopped', async () => {
    fake.respondWith(() => ({ content: 'late', heldUntil: closing }));
    const wf = (await engine.http.post('/wf/', { name: 'too large a record', definition })).body;
    const started = await engine.http.post(`/wf/${wf.id}/start_run/`, { initial_inputs: { src: { x: 'go' } } });
    assert.equal(started.status, 200, started.text);
    // Alone it ends in under two minutes (one sandbox, 28 saves of a task document growing to
    // 16 MB); a write retried forever still fails the wait below.
    const run = await waitForRun(engine.http, started.body.id, undefined, 420_000).catch(async (err: Error) => {
      throw new Error(`${err.message}\n${await runWorkflowReport(engine, started.body.id)}`);
    });
    assert.equal(run.status, 'FAILED', JSON.stringify(run).slice(0, 500));
    assert.match(String((run as { message?: string }).message), /could not be saved/);
    const handle = engine.api.temporal.workflow.getHandle(
      runWorkflowId(started.body.id, engine.api.config.temporal.workflowIdPrefix),
    );
    let status = '';
    // A write retried forever never closes the workflow; a closing one does within a few workflow
    // tasks, which a loaded host may take a minute or more to run.
    const deadline = Date.now() + 150_000;
    while ((status = (await handle.describe()).status.name) === 'RUNNING') {
      if (Date.now() > deadline)
        assert.fail(
          `the workflow is still running: a write retried, or a call awaited\n${await runWorkflowReport(engine, started.body.id)}`,
        );
      await new Promise((r) => setTimeout(r, 200));
    }
    assert.equal(status, 'FAILED');
    const attributes = (await handle.describe()).typedSearchAttributes;
    assert.equal(attributes.get(SpurRunStatus), 'FAILED', 'the status Temporal lists the run under');
    // The run stopped at the refusal: its call in flight was cancelled, the provider's reply never awaited.
    const call = fake.requests.find((r) => r.protocol !== null);
    assert.ok(call, 'the model call was made');
    await until('the run to stop its call in flight', () => call.abandoned !== undefined, 60_000);
    assert.equal(call.answered, undefined);
  });
});

import assert from 'node:assert/strict';
import { SpurRunStatus } from '../../src/contracts/search-attributes';
import { runWorkflowId } from '../../src/contracts/workflow-names';
import { type Engine, startEngine, waitForRun } from '../support/engine';
import { l, n } from '../support/graphs';

/** Values up to this size stay inline in the run's records (the largest SPUR_VALUE_REF_BYTES allows). */
const INLINE = 1024 * 1024;
/** Enough waits on one ~1 MB input that the run's one task document is over the 16 MiB document limit. */
const WAITS = 20;

/**
 * src → w0 … w19, WaitNodes of a second. A WaitNode waits in the run's workflow itself (a timer, no
 * activity), and its task records its input: twenty records of the one ~1 MB input make a task
 * document over 16 MiB, while the run's history carries that input once (the start's) and twenty
 * small timers. A shape whose history grew with the document (twenty ~1 MB node results) made each
 * workflow task carry megabytes, and under load the server closed them and the run crawled.
 */
const definition = {
  nodes: [
    n('src', 'InputNode', { output_schema: { x: 'string' } }),
    ...Array.from({ length: WAITS }, (_, i) => n(`w${i}`, 'WaitNode', { seconds: 1 })),
  ],
  links: Array.from({ length: WAITS }, (_, i) => l('src', `w${i}`)),
};

describe('e2e: a run whose record the database refuses for good fails, end to end', function () {
  this.timeout(600_000);
  let engine: Engine;
  before(async () => {
    engine = await startEngine({ SPUR_VALUE_REF_BYTES: String(INLINE) });
  });
  after(() => engine?.close());

  it('ends FAILED saying its record could not be saved, and its workflow closes instead of retrying the write', async () => {
    const wf = (await engine.http.post('/wf/', { name: 'too large a record', definition })).body;
    const x = 'x'.repeat(INLINE - 64);
    const started = await engine.http.post(`/wf/${wf.id}/start_run/`, { initial_inputs: { src: { x } } });
    assert.equal(started.status, 200, started.text);
    const run = await waitForRun(engine.http, started.body.id, undefined, 120_000);
    assert.equal(run.status, 'FAILED', JSON.stringify(run).slice(0, 500));
    assert.match(String((run as { message?: string }).message), /could not be saved/);
    const handle = engine.api.temporal.workflow.getHandle(
      runWorkflowId(started.body.id, engine.api.config.temporal.workflowIdPrefix),
    );
    let status = '';
    // A write retried forever never closes the workflow; a closing one does once its last nodes
    // have ended, each of their saves refused in turn, every one sending the ~20 MB document again:
    // 12 s alone, 72 s beside three heavy files and two CPU hogs, over 150 s once in a whole CI run.
    const deadline = Date.now() + 420_000;
    while ((status = (await handle.describe()).status.name) === 'RUNNING') {
      assert.ok(Date.now() < deadline, 'the workflow is still running: the write is being retried');
      await new Promise((r) => setTimeout(r, 200));
    }
    assert.equal(status, 'FAILED');
    const attributes = (await handle.describe()).typedSearchAttributes;
    assert.equal(attributes.get(SpurRunStatus), 'FAILED', 'the status Temporal lists the run under');
  });
});

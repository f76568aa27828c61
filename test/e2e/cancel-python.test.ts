// docs/runs.md: cancelling a run stops its running Python within a bound. Watched from the host: the
// node's process (and the child it started) end within that bound of the cancel, for a Python node
// run as a local activity (a short timeout: through the api's cancel mark, looked for every second,
// since its workflow task would hear of the cancel only up to 8 s later) and as a regular one (a long
// timeout: through its heartbeats, once the run's workflow has taken the cancel).
import assert from 'node:assert/strict';
import { type Engine, startEngine, waitForRun } from '../support/engine';
import {
  type PyRun,
  eventually,
  parentOf,
  pidsWith,
  processEnded,
  processTokens,
  startPython,
  tokenedWait,
} from '../support/python-runs';
import { closedRunHistory } from '../support/run-history';

/**
 * The bounds docs/runs.md states: 2 s for a short node (the api's mark, looked for every second), 3 s
 * for a regular one (a workflow task to take the cancel, then the next heartbeat, one a second).
 */
const CANCEL_STOPS_PYTHON_MS = { local: 2000, regular: 3000 };

describe('e2e: cancelling a run stops its Python within the documented bound', function () {
  this.timeout(120_000);
  let engine: Engine;
  const tokens = processTokens('spur-cancel');
  before(async () => {
    engine = await startEngine();
  });
  after(async () => {
    // Should the process have outlived the test after all, it must not outlive the suite.
    tokens.killAll();
    await engine?.close();
  });

  const cases = [
    { as: 'a regular activity', timeout: 900, activities: 1, bound: CANCEL_STOPS_PYTHON_MS.regular },
    { as: 'a local activity (timeout_seconds 60)', timeout: 60, activities: 0, bound: CANCEL_STOPS_PYTHON_MS.local },
  ];
  for (const { as, timeout, activities, bound } of cases)
    it(`a Python node sleeping for ten minutes, run as ${as}: its processes have ended ${bound} ms after the cancel was sent, and the run is CANCELED`, async () => {
      const token = tokens.next();
      const runId = await startPython(engine.http, `${tokenedWait(token, 600)}\nreturn {}`, {
        timeout_seconds: timeout,
      });
      const child = await eventually('the node’s sleeping child runs', () => pidsWith(token)[0]);
      const node = parentOf(child);
      assert.ok(!processEnded(node) && !processEnded(child));

      const sent = Date.now();
      // Watched while the cancel is answered (it answers once the run has recorded CANCELED).
      const cancelled = engine.http.post(`/wf/cancel_workflow/${runId}/`);
      // Watched closely (not with the growing poll delays): the time it ended is what is asserted.
      const deadline = sent + 30_000;
      while (!(processEnded(node) && processEnded(child)) && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 20));
      const endedAfter = Date.now() - sent;
      assert.ok(processEnded(node) && processEnded(child), 'the Python processes ended');
      assert.ok(endedAfter <= bound, `Python ran on for ${endedAfter} ms after the cancel`);
      const cancel = await cancelled;
      assert.equal(cancel.status, 200, cancel.text);
      assert.equal((cancel.body as { status?: string }).status, 'CANCELED');
      const run = await waitForRun(engine.http, runId);
      assert.equal(run.status, 'CANCELED');
      // Stopped, not completed with nothing: the node is cancelled with the run.
      const task = (run as PyRun).tasks.find((t) => t.node_id === 'py');
      assert.equal(task?.status, 'CANCELED');
      assert.equal(task?.outputs, null);
      const history = await closedRunHistory(engine, runId);
      const scheduled = (history.events ?? []).filter((e) => e.activityTaskScheduledEventAttributes).length;
      assert.equal(scheduled, activities, `the node ran as ${as}`);
      // Cancelled, not failed and tried again: the node ran once.
      assert.equal(pidsWith(token).length, 0);
    });
});

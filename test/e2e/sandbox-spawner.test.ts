// A worker starts its Python sandboxes through a small helper process of its own (spawner.ts): a
// fork copies the parent's page tables, so spawning from the worker costs more the more memory the
// worker holds. What must hold with the helper in between: the sandbox is still the run's own, a
// helper that dies takes its sandboxes along and the node runs again, and a worker that dies takes
// the helper (short-python.test.ts kills a worker under a running node).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { type SplitEngine, startSplitEngine, waitForRun } from '../support/engine';
import { until } from '../support/exec-log';
import {
  childOnTheWay,
  eventually,
  pidsWith,
  processEnded,
  processTokens,
  startPython,
  tokenedWait,
} from '../support/python-runs';

const commandLine = (pid: number) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
const rssKb = (pid: number) => Number(/^VmRSS:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);

describe("e2e: Python sandboxes are started by the worker's spawner helper", function () {
  this.timeout(240_000);
  let engine: SplitEngine;
  const tokens = processTokens('spur-spawner');
  before(async () => {
    engine = await startSplitEngine();
  });
  after(async () => {
    tokens.killAll();
    await engine?.close();
  });

  /** The worker's child on the way from the worker to `pid`. */
  const helperAbove = (pid: number) => childOnTheWay(engine.worker.process.pid as number, pid);

  it("the sandbox's launcher is a child of the spawner helper, a child of the worker holding under half its memory", async () => {
    const token = tokens.next();
    const runId = await startPython(engine.http, `${tokenedWait(token, 3)}\nreturn {}`);
    const sleeper = await eventually('the node’s code runs', () => pidsWith(token)[0]);
    const helper = helperAbove(sleeper);
    assert.match(commandLine(helper), /spawner-process\.(ts|js)/);
    assert.ok(
      rssKb(helper) * 2 < rssKb(engine.worker.process.pid as number),
      `helper ${rssKb(helper)} kB, worker ${rssKb(engine.worker.process.pid as number)} kB`,
    );
    assert.equal((await waitForRun(engine.http, runId, undefined, 60_000)).status, 'COMPLETED');
  });

  it('a helper killed while a node runs takes that sandbox along; the node runs again in a new helper and the run completes with its answer', async () => {
    const token = tokens.next();
    // Each attempt waits 4 s in a child the host can see, then answers.
    const runId = await startPython(engine.http, `${tokenedWait(token, 4)}\nreturn {"done": "yes"}`, {
      output_schema: { done: 'string' },
    });
    const first = await eventually('the node’s code runs', () => pidsWith(token)[0]);
    const helper = helperAbove(first);
    process.kill(helper, 'SIGKILL');
    await until('the first attempt’s sandbox has ended', () => processEnded(first), 10_000);
    const again = await eventually(
      'the node’s code runs again',
      () => pidsWith(token).find((p) => p !== first && !processEnded(p)),
      60_000,
    );
    assert.notEqual(helperAbove(again), helper, 'a new helper started the second attempt');
    const run = await waitForRun(engine.http, runId, undefined, 120_000);
    assert.equal(run.status, 'COMPLETED', JSON.stringify(run.message));
    const task = (run.tasks as Array<{ node_id: string; status: string; outputs: unknown }>).find(
      (t) => t.node_id === 'py',
    );
    assert.deepEqual(task?.outputs, { done: 'yes' });
  });
});

import assert from 'node:assert/strict';
import { type SplitEngine, startSplitEngine, waitForRun } from '../support/engine';
import { l, n } from '../support/graphs';
import { childrenOf, procText } from '../support/host-process';

// One workflow must not starve the host: a worker runs at most SPUR_PYTHON_MAX_CONCURRENT Python
// sandboxes at once, however wide the batch, and queues the rest.

const commOf = (pid: number): string => procText(`/proc/${pid}/comm`).trim();

/**
 * Sandboxes (bwrap launchers) the worker has started and that are alive now: its children whose
 * command is bwrap, and those of its other children. A run's sandbox is spawned by the worker's
 * spawner helper (src/nodes/code-execution/spawner.ts); the sandbox's readiness probe, which holds a
 * slot too, by the worker itself. Read every 20 ms, so it looks at the worker's descendants only, not
 * at every process of a busy machine.
 */
function sandboxesOf(workerPid: number): number {
  let count = 0;
  for (const child of childrenOf(workerPid)) {
    if (commOf(child) === 'bwrap') count++;
    else count += childrenOf(child).filter((grandchild) => commOf(grandchild) === 'bwrap').length;
  }
  return count;
}

describe('e2e: a worker bounds the Python sandboxes it runs at once', function () {
  this.timeout(240_000);
  const LIMIT = 3;
  let engine: SplitEngine;
  before(async () => {
    engine = await startSplitEngine({ SPUR_PYTHON_MAX_CONCURRENT: String(LIMIT) });
  });
  after(() => engine?.close());

  it(`a batch of 200 rows of a sleeping Python node, 50 rows at a time, never has more than ${LIMIT} sandboxes alive, and completes`, async () => {
    const code = 'import time\ntime.sleep(0.2)\nreturn {"y": "row-" + input_model["in"]["x"]}';
    const definition = {
      nodes: [
        n('in', 'InputNode', { output_schema: { x: 'string' } }),
        n('py', 'PythonFuncNode', { code, output_schema: { y: 'string' } }),
        n('out', 'OutputNode', { output_map: { y: 'py.y' } }),
      ],
      links: [l('in', 'py'), l('py', 'out')],
    };
    const wf = (await engine.http.post('/wf/', { name: 'wide-python', definition })).body.id as string;
    const fd = new FormData();
    fd.append(
      'file',
      new Blob([['x', ...Array.from({ length: 200 }, (_, i) => String(i))].join('\n')], { type: 'text/csv' }),
      'rows.csv',
    );
    const ds = (await engine.http.post('/ds/?name=rows', fd)).body.id as string;
    const parent = (await engine.http.post(`/wf/${wf}/start_batch_run/`, { dataset_id: ds, mini_batch_size: 50 })).body
      .id as string;

    let most = 0;
    let done = false;
    const sampling = (async () => {
      while (!done) {
        most = Math.max(most, sandboxesOf(engine.worker.process.pid));
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    const run = await waitForRun(engine.http, parent, undefined, 200_000);
    done = true;
    await sampling;

    assert.equal(run.status, 'COMPLETED', JSON.stringify(run).slice(0, 500));
    assert.ok(most <= LIMIT, `${most} sandboxes alive at once`);
    assert.ok(most >= 2, `the sampler saw ${most}: rows ran side by side, and the count sees them`);
    const rows = (await engine.http.get(`/run/${parent}/`)).body;
    assert.equal(rows.percentage_complete, 100);
  });
});

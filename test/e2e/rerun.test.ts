import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { isFinal, closeReconcilingEngine, startEngine, waitForRun, type Engine } from '../support/engine';
import { largestHistoryPayload } from '../support/run-history';
import { rerunLeftUnstarted } from '../support/half-started-runs';
import { cond, input, l, n } from '../support/graphs';
import { runWorkflowId } from '../../src/contracts/workflow-names';

/** A run shows FAILED as soon as a node fails, while other branches go on: it has ended once it has an end_time. */
const hasEnded = (r: { status: string }) => isFinal(r) && !!(r as { end_time?: string | null }).end_time;
const sha = (text: string) => createHash('sha256').update(text).digest('hex');

type Task = {
  id: string;
  node_id: string;
  status: string;
  inputs: unknown;
  outputs: Record<string, unknown> | null;
  start_time: string | null;
  reused: boolean;
  error: string | null;
};
type Run = {
  id: string;
  status: string;
  end_time: string | null;
  tasks: Task[];
  outputs: Record<string, unknown> | null;
  initial_inputs: unknown;
  rerun_of: string | null;
  rerun_from_node_id: string | null;
  workflow_version_id: string | null;
};

/** A Python node that returns a fresh 128-bit random draw `r` (two runs never agree) and `extra` (key → Python expression). */
function randomNode(id: string, extra: Record<string, string> = {}) {
  const fields = Object.entries(extra)
    .map(([key, expr]) => `, "${key}": ${expr}`)
    .join('');
  const code = `import hashlib, random\nreturn {"r": str(random.getrandbits(128))${fields}}`;
  const schema = Object.fromEntries(Object.keys(extra).map((key) => [key, 'string']));
  return n(id, 'PythonFuncNode', { code, output_schema: { r: 'string', ...schema } });
}

/** src → p1 → p2 → p3 → p4 (`in` is a Python keyword): p1 echoes the input, p3 what p2 handed it, p4 what p3 handed it. */
function chain(p3 = randomNode('p3', { seen: 'input_model.p2.r' })) {
  return {
    nodes: [
      input('src'),
      randomNode('p1', { x: 'input_model.src.x' }),
      randomNode('p2'),
      p3,
      randomNode('p4', { seen: 'input_model.p3.r' }),
    ],
    links: [l('src', 'p1'), l('p1', 'p2'), l('p2', 'p3'), l('p3', 'p4')],
  };
}

describe('e2e: rerun from a node', function () {
  this.timeout(180_000);
  let engine: Engine;
  before(async () => {
    engine = await startEngine();
  });
  after(() => engine?.close());

  const task = (run: Run, id: string) => run.tasks.find((t) => t.node_id === id) as Task;
  async function workflow(definition: unknown): Promise<string> {
    const res = await engine.http.post('/wf/', { name: `rerun-${Math.random()}`, definition });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body.id as string;
  }
  async function ranTo(
    wfId: string,
    x = 'a',
    done: (r: { status: string }) => boolean = hasEnded,
    inputId = 'src',
  ): Promise<Run> {
    const started = await engine.http.post(`/wf/${wfId}/start_run/`, { initial_inputs: { [inputId]: { x } } });
    assert.equal(started.status, 200, JSON.stringify(started.body));
    return (await waitForRun(engine.http, started.body.id, done, 120_000)) as Run;
  }
  async function rerun(runId: string, body: Record<string, unknown>, expected = 200): Promise<Run> {
    const res = await engine.http.post(`/run/${runId}/rerun/`, body);
    assert.equal(res.status, expected, JSON.stringify(res.body));
    return res.body as Run;
  }
  const ended = (id: string) => waitForRun(engine.http, id, hasEnded, 120_000) as Promise<Run>;

  it('keeps the outputs above the start node, executes it and what follows it again', async () => {
    const wf = await workflow(chain());
    const original = await ranTo(wf);
    assert.equal(original.status, 'COMPLETED', JSON.stringify(original));

    const created = await rerun(original.id, { from_node_id: 'p3' });
    assert.equal(created.status, 'PENDING');
    assert.equal(created.rerun_of, original.id);
    assert.equal(created.rerun_from_node_id, 'p3');
    assert.notEqual(created.id, original.id);
    assert.equal(
      created.workflow_version_id,
      original.workflow_version_id,
      "'same' is the default: the version the original ran",
    );
    const again = await ended(created.id);
    assert.equal(again.status, 'COMPLETED', JSON.stringify(again));
    assert.equal(again.rerun_of, original.id);

    for (const id of ['src', 'p1', 'p2']) {
      const [before, after] = [task(original, id), task(again, id)];
      assert.equal(after.reused, true, `${id} is reused`);
      assert.equal(after.status, 'COMPLETED');
      assert.deepEqual(after.outputs, before.outputs, `${id}: the recorded output, not a new draw`);
      assert.equal(after.start_time, before.start_time, `${id}: not executed again`);
      assert.notEqual(after.id, before.id, "the rerun's own task ids");
    }
    for (const id of ['p3', 'p4']) {
      assert.equal(task(again, id).reused, false, `${id} ran again`);
      assert.equal(task(again, id).status, 'COMPLETED');
      assert.notEqual(task(again, id).outputs?.r, task(original, id).outputs?.r, `${id}: a new 128-bit draw`);
    }
    assert.equal(task(again, 'p3').outputs?.seen, task(original, 'p2').outputs?.r, "p3 got p2's reused output");
    assert.equal(task(again, 'p4').outputs?.seen, task(again, 'p3').outputs?.r, "p4 got the new p3's output");
    assert.deepEqual(again.outputs?.p2, original.outputs?.p2, 'the run outputs hold the reused ones too');
    assert.deepEqual(again.outputs?.p4, task(again, 'p4').outputs);
    assert.ok(
      original.tasks.every((t) => t.reused === false),
      'an ordinary run reuses nothing',
    );
    const listed = (await engine.http.get(`/run/${again.id}/`)).body as Run;
    assert.equal(listed.rerun_from_node_id, 'p3');
  });

  it("input_overrides replace the start node's input; from the InputNode they become the initial inputs", async () => {
    const wf = await workflow(chain());
    const original = await ranTo(wf, 'first');

    const overridden = await ended(
      (await rerun(original.id, { from_node_id: 'p3', input_overrides: { p2: { r: 'given' } } })).id,
    );
    assert.equal(overridden.status, 'COMPLETED', JSON.stringify(overridden));
    assert.deepEqual(task(overridden, 'p3').inputs, { p2: { r: 'given' } });
    assert.equal(task(overridden, 'p3').outputs?.seen, 'given');
    assert.deepEqual(task(overridden, 'p2').outputs, task(original, 'p2').outputs, 'p2 itself is still reused');

    const fromInput = await ended(
      (await rerun(original.id, { from_node_id: 'src', input_overrides: { x: 'second' } })).id,
    );
    assert.equal(fromInput.status, 'COMPLETED', JSON.stringify(fromInput));
    assert.deepEqual(fromInput.initial_inputs, { src: { x: 'second' } });
    assert.equal(task(fromInput, 'p1').outputs?.x, 'second');
    assert.ok(
      fromInput.tasks.every((t) => !t.reused),
      'from the InputNode every node runs again',
    );

    const sameInputs = await ended((await rerun(original.id, { from_node_id: 'src' })).id);
    assert.equal(task(sameInputs, 'p1').outputs?.x, 'first', 'without overrides the original initial inputs');
  });

  it('refuses an open run (409), an unknown run (404), an unknown or nested node (422)', async () => {
    const gated = {
      nodes: [input('src'), n('gate', 'HumanInterventionNode', {}), n('out', 'OutputNode')],
      links: [l('src', 'gate'), l('gate', 'out')],
    };
    const paused = await ranTo(await workflow(gated), 'a', (r) => r.status === 'PAUSED');
    const open = await engine.http.post(`/run/${paused.id}/rerun/`, { from_node_id: 'gate' });
    assert.equal(open.status, 409, JSON.stringify(open.body));
    assert.match(open.body.detail, /still PAUSED/);

    assert.equal((await engine.http.post('/run/R999999/rerun/', { from_node_id: 'p3' })).status, 404);

    const wf = await workflow(chain());
    const done = await ranTo(wf);
    const unknown = await engine.http.post(`/run/${done.id}/rerun/`, { from_node_id: 'nope' });
    assert.equal(unknown.status, 422);
    assert.deepEqual(unknown.body.detail[0].loc, ['body', 'from_node_id']);
    const badVersion = await engine.http.post(`/run/${done.id}/rerun/`, { from_node_id: 'p3', version: 'latest' });
    assert.equal(badVersion.status, 422);

    const looped = {
      nodes: [
        input('src'),
        n('loop', 'ForLoopNode', { num_iterations: 1 }),
        n('li', 'InputNode', {}, { parent_id: 'loop' }),
        n('lo', 'OutputNode', { output_map: { x: 'li.src.x' } }, { parent_id: 'loop' }),
      ],
      links: [l('src', 'loop'), l('li', 'lo')],
    };
    const loopRun = await ranTo(await workflow(looped));
    assert.equal(loopRun.status, 'COMPLETED', JSON.stringify(loopRun));
    const nested = await engine.http.post(`/run/${loopRun.id}/rerun/`, { from_node_id: 'lo' });
    assert.equal(nested.status, 422, JSON.stringify(nested.body));
    assert.match(nested.body.detail[0].msg, /top-level/);
    const container = await ended((await rerun(loopRun.id, { from_node_id: 'loop' })).id);
    assert.equal(container.status, 'COMPLETED', JSON.stringify(container));
    assert.equal(task(container, 'src').reused, true);
  });

  it('reruns a CANCELED run from the node it stopped at; a node cancelled with the run has nothing to reuse (422)', async () => {
    const gated = {
      nodes: [input('src'), randomNode('p1'), n('gate', 'HumanInterventionNode', {}), n('out', 'OutputNode')],
      links: [l('src', 'p1'), l('p1', 'gate'), l('gate', 'out')],
    };
    const paused = await ranTo(await workflow(gated), 'a', (r) => r.status === 'PAUSED');
    assert.equal((await engine.http.post(`/wf/cancel_workflow/${paused.id}/`)).status, 200);
    const canceled = await ended(paused.id);
    assert.equal(canceled.status, 'CANCELED');

    const below = await engine.http.post(`/run/${canceled.id}/rerun/`, { from_node_id: 'out' });
    assert.equal(below.status, 422, JSON.stringify(below.body));
    assert.match(below.body.detail[0].msg, /gate/);

    const again = (await waitForRun(
      engine.http,
      (await rerun(canceled.id, { from_node_id: 'gate' })).id,
      (r) => r.status === 'PAUSED',
      120_000,
    )) as Run;
    assert.equal(task(again, 'p1').reused, true);
    assert.deepEqual(task(again, 'p1').outputs, task(canceled, 'p1').outputs);
    assert.equal(task(again, 'gate').status, 'PAUSED', 'the start node runs again: it pauses for a human again');
    assert.equal((await engine.http.post(`/wf/cancel_workflow/${again.id}/`)).status, 200);
  });

  it("reruns a FAILED run on the current definition after a fix; 'same' runs the version that failed", async () => {
    const broken = randomNode('p3', { seen: 'input_model.p2.r', bad: 'str(1 / 0)' });
    const wf = await workflow(chain(broken));
    const failed = await ranTo(wf);
    assert.equal(failed.status, 'FAILED', JSON.stringify(failed));
    assert.equal(task(failed, 'p4').status, 'CANCELED');

    const sameAgain = await ended((await rerun(failed.id, { from_node_id: 'p3' })).id);
    assert.equal(sameAgain.status, 'FAILED', "'same' runs the definition that failed");
    assert.deepEqual(task(sameAgain, 'p2').outputs, task(failed, 'p2').outputs);

    const fixed = (await engine.http.get(`/wf/${wf}/`)).body;
    const edit = await engine.http.put(`/wf/${wf}/`, {
      name: fixed.name,
      definition: { ...fixed.definition, ...chain() },
    });
    assert.equal(edit.status, 200, JSON.stringify(edit.body));
    const current = await rerun(failed.id, { from_node_id: 'p3', version: 'current' });
    assert.notEqual(
      current.workflow_version_id,
      failed.workflow_version_id,
      'the current definition is pinned as a new version',
    );
    const repaired = await ended(current.id);
    assert.equal(repaired.status, 'COMPLETED', JSON.stringify(repaired));
    assert.deepEqual(task(repaired, 'p2').outputs, task(failed, 'p2').outputs);
    assert.equal(task(repaired, 'p3').outputs?.seen, task(failed, 'p2').outputs?.r);
    assert.equal(task(repaired, 'p4').reused, false);

    // A node the failed run never had (a new branch off the input) has no output to reuse.
    const grown = chain();
    grown.nodes.push(randomNode('side'));
    grown.links.push(l('src', 'side'));
    assert.equal(
      (await engine.http.put(`/wf/${wf}/`, { name: fixed.name, definition: { ...fixed.definition, ...grown } })).status,
      200,
    );
    const missing = await engine.http.post(`/run/${failed.id}/rerun/`, { from_node_id: 'p3', version: 'current' });
    assert.equal(missing.status, 422, JSON.stringify(missing.body));
    assert.match(missing.body.detail[0].msg, /'side' did not run/);
    const gone = await engine.http.post(`/run/${failed.id}/rerun/`, { from_node_id: 'p9', version: 'current' });
    assert.equal(gone.status, 422);
  });

  it('reuses outputs held by reference (large values) and takes large input_overrides by reference', async () => {
    const definition = {
      nodes: [
        input('src'),
        n('big', 'PythonFuncNode', {
          code: 'import secrets\nreturn {"s": secrets.token_hex(300000)}',
          output_schema: { s: 'string' },
        }),
        randomNode('dig', { h: 'hashlib.sha256(input_model.big.s.encode()).hexdigest()' }),
      ],
      links: [l('src', 'big'), l('big', 'dig')],
    };
    const original = await ranTo(await workflow(definition));
    assert.equal(original.status, 'COMPLETED', JSON.stringify(original.tasks.map((t) => t.error)));
    const bigText = task(original, 'big').outputs?.s as string;
    assert.equal(bigText.length, 600_000);

    const again = await ended((await rerun(original.id, { from_node_id: 'dig' })).id);
    assert.equal(again.status, 'COMPLETED', JSON.stringify(again.tasks.map((t) => t.error)));
    assert.equal(task(again, 'big').reused, true);
    assert.equal(task(again, 'big').outputs?.s, bigText, 'the reused large output reads back whole');
    assert.equal(task(again, 'dig').outputs?.h, sha(bigText), 'the node after it got the reused value resolved');
    assert.notEqual(task(again, 'dig').outputs?.r, task(original, 'dig').outputs?.r);
    const largest = (await largestHistoryPayload(engine, again.id)).bytes;
    assert.ok(
      largest < 64 * 1024,
      `the rerun's Temporal history carries references, not the value (largest payload ${largest} bytes)`,
    );

    const given = 'z'.repeat(400_000);
    const overridden = await ended(
      (await rerun(original.id, { from_node_id: 'dig', input_overrides: { big: { s: given } } })).id,
    );
    assert.equal(overridden.status, 'COMPLETED', JSON.stringify(overridden.tasks.map((t) => t.error)));
    assert.equal(task(overridden, 'dig').outputs?.h, sha(given));
    assert.ok(
      (await largestHistoryPayload(engine, overridden.id)).bytes < 64 * 1024,
      'the override travels by reference too',
    );
  });

  it('reuses a branch a router did not take (CANCELED quietly) and reruns the taken one', async () => {
    const definition = {
      nodes: [
        input('src'),
        n('R', 'RouterNode', {
          route_map: {
            go: { conditions: [cond('src.x', 'equals', 'go')] },
            stop: { conditions: [cond('src.x', 'equals', 'stop')] },
          },
        }),
        randomNode('taken'),
        n('untaken', 'OutputNode'),
      ],
      links: [l('src', 'R'), l('R', 'taken', 'go'), l('R', 'untaken', 'stop')],
    };
    const original = await ranTo(await workflow(definition), 'go');
    assert.equal(original.status, 'COMPLETED', JSON.stringify(original));
    assert.equal(task(original, 'untaken').status, 'CANCELED');
    const again = await ended((await rerun(original.id, { from_node_id: 'taken' })).id);
    assert.equal(again.status, 'COMPLETED', JSON.stringify(again));
    assert.deepEqual([task(again, 'untaken').status, task(again, 'untaken').reused], ['CANCELED', true]);
    assert.deepEqual([task(again, 'R').status, task(again, 'R').reused], ['COMPLETED', true]);
    assert.notEqual(task(again, 'taken').outputs?.r, task(original, 'taken').outputs?.r);
  });

  it('refuses a batch parent (its nodes ran in its rows, 422) and reruns one of its rows as a run of its own', async () => {
    const wf = await workflow({
      nodes: [input('src'), randomNode('p1', { x: 'input_model.src.x' }), randomNode('p2')],
      links: [l('src', 'p1'), l('p1', 'p2')],
    });
    const fd = new FormData();
    fd.append('file', new Blob(['x\nrow-a\nrow-b'], { type: 'text/csv' }), 'rows.csv');
    const ds = await engine.http.post('/ds/?name=rerun-rows', fd);
    assert.equal(ds.status, 200, JSON.stringify(ds.body));
    const parent = (
      await engine.http.post(`/wf/${wf}/start_batch_run/`, { dataset_id: ds.body.id, mini_batch_size: 2 })
    ).body as Run;
    assert.equal((await ended(parent.id)).status, 'COMPLETED');

    const whole = await engine.http.post(`/run/${parent.id}/rerun/`, { from_node_id: 'p2' });
    assert.equal(whole.status, 422, JSON.stringify(whole.body));
    assert.match(whole.body.detail[0].msg, /batch/);

    const runs = (await engine.http.get(`/wf/${wf}/runs/?page_size=100`)).body as Array<
      Run & { parent_run_id: string | null }
    >;
    const row = runs.find((r) => r.parent_run_id === parent.id && task(r, 'p1')?.outputs?.x === 'row-b') as Run;
    assert.ok(row, 'row-b was recorded as a run of the batch');
    const again = (await ended((await rerun(row.id, { from_node_id: 'p2' })).id)) as Run & {
      parent_run_id: string | null;
    };
    assert.equal(again.status, 'COMPLETED', JSON.stringify(again));
    assert.equal(again.parent_run_id, null, "a row's rerun is not part of the batch (its output file stays as it was)");
    assert.equal(again.rerun_of, row.id);
    assert.deepEqual(task(again, 'p1').outputs, task(row, 'p1').outputs);
    assert.notEqual(task(again, 'p2').outputs?.r, task(row, 'p2').outputs?.r);
  });

  it('refuses (422) a rerun whose reused outputs would not fit in the start of a run', async () => {
    // Ten outputs of 120 000 characters: each under the by-reference threshold, together over 1 MB.
    const wide = Array.from({ length: 10 }, (_, i) =>
      // Regular activities: a short call keeps at most 16 KB of its output inline.
      n(`w${i}`, 'PythonFuncNode', {
        code: 'return {"s": "x" * 120000}',
        output_schema: { s: 'string' },
        heartbeat_timeout_seconds: 20,
      }),
    );
    const original = await ranTo(
      await workflow({
        nodes: [input('src'), ...wide, randomNode('last')],
        links: [...wide.map((w) => l('src', w.id)), l('src', 'last')],
      }),
    );
    assert.equal(original.status, 'COMPLETED', JSON.stringify(original.tasks.map((t) => t.error)));
    const res = await engine.http.post(`/run/${original.id}/rerun/`, { from_node_id: 'last' });
    assert.equal(res.status, 422, JSON.stringify(res.body).slice(0, 500));
    assert.match(res.body.detail[0].msg, /more than a run's start carries/);
    const fromTop = await ended((await rerun(original.id, { from_node_id: 'src' })).id);
    assert.equal(fromTop.status, 'COMPLETED', 'from the top nothing is reused');
  });

  it('is documented in the OpenAPI document: the route, its body and the new run and task fields', async () => {
    const doc = (await engine.http.get('/openapi.json')).body;
    const route = doc.paths['/run/{run_id}/rerun/']?.post;
    assert.ok(route, 'the rerun route is listed');
    assert.deepEqual(Object.keys(route.responses).sort(), ['200', '400', '404', '409', '422']);
    const body = doc.components.schemas.RerunRequest;
    assert.deepEqual(Object.keys(body.properties).sort(), ['from_node_id', 'input_overrides', 'version']);
    assert.deepEqual(body.properties.version.enum, ['same', 'current']);
    const run = doc.components.schemas.RunResponse.properties;
    assert.match(run.rerun_of.description, /rerun/);
    assert.ok(run.rerun_from_node_id);
    assert.equal(run.tasks.items.properties.reused.type, 'boolean');
    assert.match(run.tasks.items.properties.reused.description, /taken over from the original run/);
  });
});

describe('e2e: a rerun whose api stopped before starting it; a rerun that continues as new', function () {
  this.timeout(180_000);
  let engine: Engine;
  before(async () => {
    // Ten history events: every Python node pushes a run's history past it, so runs continue as new repeatedly.
    engine = await startEngine({
      SPUR_RECONCILE_EVERY_SECONDS: '2',
      SPUR_RECONCILE_GRACE_SECONDS: '3',
      SPUR_RUN_HISTORY_EVENTS: '10',
    });
  });
  after(() => closeReconcilingEngine(engine));

  it('is started by the reconciler as the same rerun: reused outputs, the start node with its overrides', async () => {
    const wf = (await engine.http.post('/wf/', { name: 'rerun-orphan', definition: chain() })).body;
    const started = await engine.http.post(`/wf/${wf.id}/start_run/`, { initial_inputs: { src: { x: 'a' } } });
    const original = (await waitForRun(engine.http, started.body.id, hasEnded, 120_000)) as Run;
    assert.equal(original.status, 'COMPLETED');
    const storedId = await rerunLeftUnstarted(engine, wf.id, original.id, {
      from_node_id: 'p3',
      input_overrides: { p2: { r: 'late' } },
    });
    assert.equal((await engine.http.get(`/run/${storedId}/status/`)).body.status, 'PENDING');

    const done = (await waitForRun(engine.http, storedId, hasEnded, 120_000)) as Run;
    assert.equal(done.status, 'COMPLETED', JSON.stringify(done));
    assert.equal(done.rerun_of, original.id);
    const task = (run: Run, id: string) => run.tasks.find((t) => t.node_id === id) as Task;
    assert.deepEqual(task(done, 'p2').outputs, task(original, 'p2').outputs);
    assert.equal(task(done, 'p2').reused, true);
    assert.equal(task(done, 'p3').outputs?.seen, 'late', 'the overrides were on the record');
    assert.equal(task(done, 'p4').reused, false);
  });

  it('keeps its reused tasks and preset outputs across continue-as-new', async () => {
    // Regular activities: short calls all run in one workflow task, and a history grows by tasks.
    const definition = chain();
    for (const node of definition.nodes)
      if (node.node_type === 'PythonFuncNode') Object.assign(node.config, { heartbeat_timeout_seconds: 20 });
    const wf = (await engine.http.post('/wf/', { name: 'rerun-long', definition })).body;
    const started = await engine.http.post(`/wf/${wf.id}/start_run/`, { initial_inputs: { src: { x: 'a' } } });
    const original = (await waitForRun(engine.http, started.body.id, hasEnded, 120_000)) as Run;
    assert.equal(original.status, 'COMPLETED', JSON.stringify(original));
    const created = (await engine.http.post(`/run/${original.id}/rerun/`, { from_node_id: 'p2' })).body as Run;
    const done = (await waitForRun(engine.http, created.id, hasEnded, 120_000)) as Run;
    assert.equal(done.status, 'COMPLETED', JSON.stringify(done));
    const history = await engine.api.temporal.workflow
      .getHandle(runWorkflowId(done.id, engine.api.config.temporal.workflowIdPrefix))
      .fetchHistory();
    assert.ok(
      history.events?.[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId,
      'the rerun continued as new',
    );
    const task = (run: Run, id: string) => run.tasks.find((t) => t.node_id === id) as Task;
    assert.deepEqual(
      done.tasks.map((t) => [t.node_id, t.status, t.reused]),
      [
        ['src', 'COMPLETED', true],
        ['p1', 'COMPLETED', true],
        ['p2', 'COMPLETED', false],
        ['p3', 'COMPLETED', false],
        ['p4', 'COMPLETED', false],
      ],
    );
    assert.deepEqual(task(done, 'p1').outputs, task(original, 'p1').outputs);
    assert.deepEqual(
      done.outputs?.p1,
      original.outputs?.p1,
      'the preset outputs reach the run outputs after continuing',
    );
    assert.equal(task(done, 'p3').outputs?.seen, task(done, 'p2').outputs?.r);
  });
});

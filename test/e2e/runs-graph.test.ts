import assert from 'node:assert/strict';
import { startEngine, waitForRun, type Engine } from '../support/engine';
import { cond, input, l, n } from '../support/graphs';
import { runGraph } from '../support/run-graph';

describe('e2e: graph semantics (router, coalesce, merge, static, loop, failures)', function () {
  this.timeout(60_000);
  let engine: Engine;
  before(async () => {
    engine = await startEngine();
  });
  after(() => engine?.close());

  const run = (definition: unknown, inputs: Record<string, unknown>) => runGraph(engine, definition, inputs, 'g');

  const routerGraph = {
    nodes: [
      input(),
      n('R', 'RouterNode', {
        route_map: {
          big: { conditions: [cond('in.v', 'greater_than', 10)] },
          named: { conditions: [cond('in.name', 'starts_with', 'a'), cond('in.name', 'equals', 'zed', 'OR')] },
          never: { conditions: [cond('in.v', 'less_than', -1000)] },
        },
      }),
      n('B', 'OutputNode'),
      n('N', 'OutputNode'),
      n('X', 'OutputNode'),
      n('after_x', 'MergeNode'),
    ],
    links: [l('in', 'R'), l('R', 'B', 'big'), l('R', 'N', 'named'), l('R', 'X', 'never'), l('X', 'after_x')],
  };

  it('router sends the whole input down every matching route and cancels the others', async () => {
    const { outputs, tasks, record } = await run(routerGraph, { v: '42', name: 'alice' });
    assert.deepEqual(outputs.R, {
      big: { in: { v: '42', name: 'alice' } },
      named: { in: { v: '42', name: 'alice' } },
      never: null,
    });
    assert.deepEqual(outputs.B, { R: { in: { v: '42', name: 'alice' } } });
    assert.deepEqual(outputs.N, outputs.B);
    assert.equal('X' in outputs, false);
    assert.equal(tasks.X.status, 'CANCELED');
    assert.equal(tasks.X.error, null);
    assert.equal(tasks.after_x.status, 'CANCELED', 'cancellation spreads');
    assert.equal(record.status, 'COMPLETED');
    assert.equal(record.percentage_complete, (100 * 4) / 6);
    assert.equal(tasks.R.outputs.never, null);
  });

  it('router with no match cancels every branch', async () => {
    const { outputs, tasks } = await run(routerGraph, { v: 1, name: 'bob' });
    assert.deepEqual(outputs.R, { big: null, named: null, never: null });
    for (const id of ['B', 'N', 'X', 'after_x']) assert.equal(tasks[id].status, 'CANCELED', id);
  });

  it('coalesce takes the preferred non-null branch, then link order; merge keys by title', async () => {
    const def = {
      nodes: [
        input(),
        n('R', 'RouterNode', {
          route_map: { a: { conditions: [cond('in.pick', 'equals', 'a')] }, b: { conditions: [] } },
        }),
        n('A', 'StaticValueNode', { values: { from: 'A' } }),
        n('B', 'StaticValueNode', { values: { from: 'B' } }),
        n('C', 'CoalesceNode', { preferences: ['A'] }),
        n('C2', 'CoalesceNode', { preferences: [] }),
        n('M', 'MergeNode'),
      ],
      links: [
        l('in', 'R'),
        l('R', 'A', 'a'),
        l('R', 'B', 'b'),
        l('A', 'C'),
        l('B', 'C'),
        l('B', 'C2'),
        l('A', 'C2'),
        l('in', 'M'),
        l('B', 'M'),
      ],
    };
    const both = await run(def, { pick: 'a' });
    assert.deepEqual(both.outputs.C, { from: 'A' }, 'preference wins');
    assert.deepEqual(both.outputs.C2, { from: 'B' }, 'without preference: link order');
    assert.deepEqual(both.outputs.M, { in: { pick: 'a' }, B: { from: 'B' } });
    const onlyB = await run(def, { pick: 'z' });
    assert.equal(onlyB.tasks.A.status, 'CANCELED');
    assert.deepEqual(onlyB.outputs.C, { from: 'B' }, 'null preferred input dropped');
  });

  it('a failing node fails its task, cancels dependents with "Upstream failure", other branches finish, run FAILED naming it', async () => {
    const def = {
      nodes: [
        input(),
        n('bad', 'OutputNode', { output_map: { y: 'in.missing.deep' } }),
        n('after', 'MergeNode'),
        n('good', 'OutputNode', { output_map: { x: 'in.x' } }),
      ],
      links: [l('in', 'bad'), l('bad', 'after'), l('in', 'good')],
    };
    const { outputs, tasks, record } = await run(def, { x: 'ok' });
    assert.deepEqual(outputs.good, { x: 'ok' });
    assert.equal('bad' in outputs, false);
    assert.equal(tasks.bad.status, 'FAILED');
    assert.match(tasks.bad.error, /in\.missing\.deep/);
    assert.equal(tasks.after.status, 'CANCELED');
    assert.equal(tasks.after.error, 'Upstream failure');
    assert.equal(tasks.good.status, 'COMPLETED');
    assert.equal(record.status, 'FAILED');
    assert.match(record.message, /^Node 'bad' \(bad\) failed: /);
  });

  it('a node with no incoming link fails with "has no input"; an integration without its credential fails naming it', async () => {
    const def = {
      nodes: [
        input(),
        n('lonely', 'StaticValueNode', { values: { a: 1 } }),
        n('slack', 'SlackNotifyNode', { channel: 'x' }),
      ],
      links: [l('in', 'slack')],
    };
    const { tasks, record } = await run(def, { x: 1 });
    assert.equal(tasks.lonely.status, 'FAILED');
    assert.equal(tasks.lonely.error, 'Node lonely has no input');
    assert.equal(tasks.slack.status, 'FAILED');
    assert.match(tasks.slack.error, /SLACK_BOT_TOKEN is not set/);
    assert.equal(record.status, 'FAILED');
  });

  it('ForLoopNode runs its child graph num_iterations times with loop_history', async () => {
    const def = {
      nodes: [
        input(),
        n('loop', 'ForLoopNode', { num_iterations: 3 }),
        n('li', 'InputNode', {}, { parent_id: 'loop' }),
        n('lo', 'OutputNode', { output_map: { seen: 'li.loop_history', x: 'li.in.x' } }, { parent_id: 'loop' }),
        n('out', 'OutputNode'),
      ],
      links: [l('in', 'loop'), l('li', 'lo'), l('loop', 'out')],
    };
    const { outputs, tasks } = await run(def, { x: 'v' });
    assert.equal(outputs.loop.x, 'v');
    assert.equal(outputs.loop.seen.lo.length, 2, 'the last iteration sees two earlier ones');
    assert.equal(tasks.loop.subworkflow_output.lo.length, 3);
    assert.equal(tasks.li, undefined, 'children get no tasks');
    assert.deepEqual(outputs.out, { loop: outputs.loop });
  });

  it('ForLoopNode input_map picks each iteration’s input by dotted path; a missing path fails the loop', async () => {
    const def = (map: Record<string, string>) => ({
      nodes: [
        input(),
        n('loop', 'ForLoopNode', { num_iterations: 2, input_map: map }),
        n('li', 'InputNode', {}, { parent_id: 'loop' }),
        n('lo', 'OutputNode', { output_map: { got: 'li.picked' } }, { parent_id: 'loop' }),
      ],
      links: [l('in', 'loop'), l('li', 'lo')],
    });
    const ok = await run(def({ picked: 'in.x' }), { x: 'deep' });
    assert.deepEqual(ok.outputs.loop, { got: 'deep' });
    const bad = await run(def({ picked: 'in.nope' }), { x: 'deep' });
    assert.equal(bad.tasks.loop.status, 'FAILED');
    assert.match(bad.tasks.loop.error, /input_map field 'picked'/);
  });

  it('refuses bad inputs with 400 before creating a run: unknown key, missing inputs, no InputNode, cycle', async () => {
    const { http } = engine;
    const ok = (
      await http.post('/wf/', {
        name: 'bad-inputs',
        definition: { nodes: [input(), n('o', 'OutputNode')], links: [l('in', 'o')] },
      })
    ).body;
    const unknown = await http.post(`/wf/${ok.id}/run/`, { initial_inputs: { nope: { x: 1 } } });
    assert.equal(unknown.status, 400);
    assert.match(unknown.body.detail, /'nope'/);
    const missing = await http.post(`/wf/${ok.id}/start_run/`, { initial_inputs: {} });
    assert.equal(missing.status, 400);
    assert.match(missing.body.detail, /needs the InputNode's fields under 'in'/);
    const byTitle = await http.post(`/wf/${ok.id}/run/`, { initial_inputs: { in: { x: 1 } } });
    assert.equal(byTitle.status, 200);

    const noInput = (
      await http.post('/wf/', { name: 'no-input', definition: { nodes: [n('o', 'OutputNode')], links: [] } })
    ).body;
    const r1 = await http.post(`/wf/${noInput.id}/run/`, { initial_inputs: { in: { x: 1 } } });
    assert.equal(r1.status, 400);
    assert.match(r1.body.detail, /no InputNode/);
    const cyclic = (
      await http.post('/wf/', {
        name: 'cyclic',
        definition: {
          nodes: [input(), n('a', 'MergeNode'), n('b', 'MergeNode')],
          links: [l('in', 'a'), l('a', 'b'), l('b', 'a')],
        },
      })
    ).body;
    const r2 = await http.post(`/wf/${cyclic.id}/start_run/`, { initial_inputs: { in: { x: 1 } } });
    assert.equal(r2.status, 400);
    assert.match(r2.body.detail, /cycle/);
    assert.deepEqual((await http.get(`/wf/${cyclic.id}/runs/`)).body, [], 'no run record was created');
    assert.equal((await http.post('/wf/S99999/run/', { initial_inputs: {} })).status, 404);
    assert.equal((await http.post(`/wf/${ok.id}/run/`)).status, 422, 'the body is required');
  });

  it('partial run computes the target and its missing predecessors, uses precomputed outputs as given, creates no run', async () => {
    const { http } = engine;
    const def = {
      nodes: [input(), n('a', 'OutputNode', { output_map: { v: 'in.x' } }), n('b', 'MergeNode'), n('c', 'MergeNode')],
      links: [l('in', 'a'), l('a', 'b'), l('b', 'c')],
    };
    const wf = (await http.post('/wf/', { name: 'partial', definition: def })).body;
    const res = await http.post(`/wf/${wf.id}/run_partial/`, {
      node_id: 'c',
      initial_inputs: { in: { x: 7 } },
      partial_outputs: { a: { v: 'given', extra: true } },
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body, {
      a: { v: 'given', extra: true },
      b: { a: { v: 'given', extra: true } },
      c: { b: { a: { v: 'given', extra: true } } },
    });
    const fresh = await http.post(`/wf/${wf.id}/run_partial/`, { node_id: 'b', initial_inputs: { in: { x: 7 } } });
    assert.deepEqual(fresh.body, { in: { x: 7 }, a: { v: 7 }, b: { a: { v: 7 } } });
    assert.deepEqual((await http.get(`/wf/${wf.id}/runs/`)).body, []);
    assert.deepEqual((await http.get(`/wf/${wf.id}/versions/`)).body, [], 'no version either');
    assert.equal((await http.post(`/wf/${wf.id}/run_partial/`, {})).status, 422);
  });

  it('filters and pages a workflow’s runs and all runs', async () => {
    const { http } = engine;
    const wf = (
      await http.post('/wf/', {
        name: 'paged-runs',
        definition: { nodes: [input(), n('o', 'OutputNode')], links: [l('in', 'o')] },
      })
    ).body;
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      const r = await http.post(`/wf/${wf.id}/start_run/?run_type=${i % 2 ? 'odd' : 'even'}`, {
        initial_inputs: { in: { i } },
      });
      ids.push(r.body.id);
    }
    await Promise.all(ids.map((id) => waitForRun(http, id)));
    const page1 = (await http.get(`/wf/${wf.id}/runs/?page=1&page_size=3`)).body;
    assert.deepEqual(
      page1.map((r: { id: string }) => r.id),
      [ids[3], ids[2], ids[1]],
    );
    assert.deepEqual(
      (await http.get(`/wf/${wf.id}/runs/?page=2&page_size=3`)).body.map((r: { id: string }) => r.id),
      [ids[0]],
    );
    assert.equal((await http.get(`/wf/${wf.id}/runs/?status=COMPLETED`)).body.length, 4);
    assert.equal((await http.get(`/wf/${wf.id}/runs/?status=FAILED`)).body.length, 0);
    assert.equal((await http.get(`/wf/${wf.id}/runs/?status=DONE`)).status, 422);
    assert.equal((await http.get(`/wf/${wf.id}/runs/?start_date=2999-01-01T00:00:00`)).body.length, 0);
    assert.equal(
      (await http.get(`/wf/${wf.id}/runs/?end_date=2999-01-01T00:00:00Z&start_date=2000-01-01`)).body.length,
      4,
    );
    assert.deepEqual((await http.get('/wf/S424242/runs/')).body, [], 'unknown workflow: empty list, as PySpur');
    const odd = (await http.get('/run/?run_type=odd&page_size=100')).body;
    assert.deepEqual(
      odd.map((r: { id: string }) => r.id),
      [ids[3], ids[1]],
    );
    assert.equal((await http.get('/run/R999999/')).status, 404);
    assert.deepEqual((await http.get('/run/R999999/status/')).body, { detail: 'Run not found' });
  });
});

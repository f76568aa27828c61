import assert from 'node:assert/strict';
import { hashApiKey } from '../../src/http/api-keys';
import { bearer, memberWithKey } from '../support/access';
import { startEngine, waitForRun, type Engine } from '../support/engine';
import { input, l, n } from '../support/graphs';
import { client } from '../support/http';

type Http = ReturnType<typeof client>;
type Run = { id: string; status: string; message: string | null; tasks: Array<Record<string, any>>; [k: string]: any };

const ADMIN_KEY = 'spur_subworkflows-admin-key-0123456789';

/** A child: in(x) → out(echoed = in.x). */
const echoChild = (field = 'echoed') => ({
  nodes: [input(), n('out', 'OutputNode', { output_map: { [field]: 'in.x' } })],
  links: [l('in', 'out')],
});

/** A parent: in(y) → sub (the child, its x from in.y) → out(got = sub.<field>). */
const parentOf = (childId: string, config: Record<string, unknown> = {}, field = 'echoed') => ({
  nodes: [
    n('in', 'InputNode', { output_schema: { y: 'string' } }),
    n('sub', 'SubworkflowNode', { workflow_id: childId, input_map: { x: 'in.y' }, ...config }),
    n('out', 'OutputNode', { output_map: { got: `sub.${field}` } }),
  ],
  links: [l('in', 'sub'), l('sub', 'out')],
});

const task = (run: Run, id: string) => run.tasks.find((t) => t.node_id === id) as Record<string, any>;

describe('e2e: SubworkflowNode', function () {
  this.timeout(120_000);
  let engine: Engine;
  let admin: Http;

  before(async () => {
    engine = await startEngine({ SPUR_API_KEY_HASHES: hashApiKey(ADMIN_KEY), SPUR_SUBWORKFLOW_MAX_DEPTH: '2' });
    admin = client(engine.api.baseUrl, bearer(ADMIN_KEY));
  });
  after(() => engine?.close());

  let named = 0;
  async function save(http: Http, definition: unknown, name = `sub-${++named}-${Math.random()}`) {
    const res = await http.post('/wf/', { name, definition });
    assert.equal(res.status, 200, res.text);
    return res.body as { id: string; name: string; definition: any };
  }
  const childRuns = async (http: Http, workflowId: string) =>
    (await http.get(`/wf/${workflowId}/runs/?page_size=100`)).body as Run[];
  async function childRunOf(http: Http, workflowId: string): Promise<Run> {
    for (const deadline = Date.now() + 60_000; Date.now() < deadline;) {
      const [run] = await childRuns(http, workflowId);
      if (run) return run;
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error(`no run of ${workflowId}`);
  }

  it('is listed by /node/supported_types/ with its config schema', async () => {
    const logic = (await admin.get('/node/supported_types/')).body.Logic as Array<Record<string, any>>;
    const entry = logic.find((e) => e.name === 'SubworkflowNode');
    assert.ok(entry, 'listed under Logic');
    assert.equal(entry.config.title, 'Subworkflow');
    assert.deepEqual(entry.config.properties.version.enum, ['latest', 'pinned']);
    assert.equal(entry.config.properties.version.default, 'latest');
    assert.ok(entry.config.properties.input_map);
    // Empty by default: PySpur's editor saves a node as it is added, before the user picks the workflow.
    assert.equal(entry.config.properties.workflow_id.default, '');
  });

  it('saves a node whose workflow_id is not filled in yet, and a run of it fails the node saying so', async () => {
    const parent = await save(admin, parentOf(''));
    const started = await admin.post(`/wf/${parent.id}/start_run/`, { initial_inputs: { in: { y: 'x' } } });
    assert.equal(started.status, 200, started.text);
    const run = await waitForRun(admin, started.body.id);
    assert.equal(run.status, 'FAILED');
    assert.match(run.tasks.find((t: { node_id: string }) => t.node_id === 'sub').error, /names no workflow/);
  });

  it("runs the child as a run of its own and takes its OutputNode's output", async () => {
    const child = await save(admin, echoChild());
    const parent = await save(admin, parentOf(child.id));
    const res = await admin.post(`/wf/${parent.id}/run/`, { initial_inputs: { in: { y: 'hello' } } });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.out, { got: 'hello' });
    const [childRun] = await childRuns(admin, child.id);
    assert.ok(childRun);
    const parentRun = (await childRuns(admin, parent.id))[0] as Run;
    assert.equal(childRun.parent_run_id, parentRun.id);
    assert.equal(childRun.run_type, 'subworkflow');
    assert.equal(childRun.status, 'COMPLETED');
    assert.deepEqual(childRun.trigger, {
      kind: 'subworkflow',
      id: parentRun.id,
      scheduled_time: null,
      delivery_id: null,
    });
    assert.deepEqual(childRun.initial_inputs, { in: { x: 'hello' } });
    assert.deepEqual(task(parentRun, 'sub').outputs, { echoed: 'hello' });
    assert.equal(task(parentRun, 'sub').waiting_for, null);
    const all = (await admin.get('/run/?parent_only=false&page_size=100')).body as Run[];
    assert.ok(
      all.some((r) => r.id === childRun.id && r.parent_run_id === parentRun.id),
      'GET /run/?parent_only=false lists it',
    );
  });

  it('"pinned" runs the version saved with the parent, "latest" the child as it is now', async () => {
    const child = await save(admin, echoChild('before'));
    const pinned = await save(admin, parentOf(child.id, { version: 'pinned' }, 'before'));
    const latest = await save(admin, parentOf(child.id, { version: 'latest' }, 'after'));
    assert.match(pinned.definition.nodes[1].config.pinned_version_id, /^SV\d+$/);
    const edited = await admin.put(`/wf/${child.id}/`, { name: child.name, definition: echoChild('after') });
    assert.equal(edited.status, 200, edited.text);
    const fromPinned = await admin.post(`/wf/${pinned.id}/run/`, { initial_inputs: { in: { y: 'p' } } });
    assert.deepEqual(fromPinned.body.out, { got: 'p' }, JSON.stringify(fromPinned.body));
    const fromLatest = await admin.post(`/wf/${latest.id}/run/`, { initial_inputs: { in: { y: 'l' } } });
    assert.deepEqual(fromLatest.body.out, { got: 'l' }, JSON.stringify(fromLatest.body));
  });

  it("a failing child fails the parent's node, naming the child run", async () => {
    const child = await save(admin, {
      nodes: [input(), n('out', 'OutputNode', { output_map: { z: 'in.missing' } })],
      links: [l('in', 'out')],
    });
    const parent = await save(admin, parentOf(child.id));
    const started = await admin.post(`/wf/${parent.id}/start_run/`, { initial_inputs: { in: { y: 'v' } } });
    const run = (await waitForRun(admin, started.body.id)) as Run;
    const childRun = await childRunOf(admin, child.id);
    assert.equal(childRun.status, 'FAILED');
    assert.equal(run.status, 'FAILED');
    assert.equal(task(run, 'sub').status, 'FAILED');
    assert.match(task(run, 'sub').error, new RegExp(`^Child run ${childRun.id} failed: Node 'out' \\(out\\) failed`));
    assert.match(run.message as string, new RegExp(`Child run ${childRun.id} failed`));
  });

  it("a child's pause is listed and the parent waits for it; approving the child completes both", async () => {
    const child = await save(admin, {
      nodes: [
        input(),
        n('gate', 'HumanInterventionNode', { message: 'Approve the child' }),
        n('out', 'OutputNode', { output_map: { echoed: 'gate.in.x' } }),
      ],
      links: [l('in', 'gate'), l('gate', 'out')],
    });
    const parent = await save(admin, parentOf(child.id));
    const started = await admin.post(`/wf/${parent.id}/start_run/`, { initial_inputs: { in: { y: 'wait' } } });
    const childRun = await childRunOf(admin, child.id);
    await waitForRun(admin, childRun.id, (r) => r.status === 'PAUSED');
    const waiting = (await waitForRun(
      admin,
      started.body.id,
      (r: any) => task(r, 'sub')?.waiting_for === childRun.id,
    )) as Run;
    assert.equal(waiting.status, 'RUNNING');
    assert.equal(task(waiting, 'sub').status, 'RUNNING');
    assert.equal(task(waiting, 'sub').waiting_reason, 'subworkflow');
    const paused = (await admin.get('/wf/paused_workflows/?page_size=100')).body as Array<Record<string, any>>;
    const listed = paused.find((p) => p.run.id === childRun.id);
    assert.ok(listed, 'the child run is listed as paused');
    assert.equal(listed.current_pause.pause_message, 'Approve the child');
    const approved = await admin.post(`/wf/process_pause_action/${childRun.id}/`, {
      action: 'APPROVE',
      user_id: 'alice',
      inputs: {},
    });
    assert.equal(approved.status, 200, approved.text);
    assert.equal((await waitForRun(admin, childRun.id)).status, 'COMPLETED');
    const done = (await waitForRun(admin, started.body.id)) as Run;
    assert.equal(done.status, 'COMPLETED');
    assert.deepEqual(done.outputs.out, { got: 'wait' });
  });

  it('cancelling the parent cancels the child: both end CANCELED', async () => {
    const child = await save(admin, {
      nodes: [input(), n('gate', 'HumanInterventionNode', { message: 'Never decided' }), n('out', 'OutputNode')],
      links: [l('in', 'gate'), l('gate', 'out')],
    });
    const parent = await save(admin, parentOf(child.id));
    const started = await admin.post(`/wf/${parent.id}/start_run/`, { initial_inputs: { in: { y: 'c' } } });
    const childRun = await childRunOf(admin, child.id);
    await waitForRun(admin, childRun.id, (r) => r.status === 'PAUSED');
    const cancelled = await admin.post(`/wf/cancel_workflow/${started.body.id}/`, {});
    assert.equal(cancelled.status, 200, cancelled.text);
    assert.equal((await waitForRun(admin, started.body.id)).status, 'CANCELED');
    assert.equal((await waitForRun(admin, childRun.id, (r) => r.status === 'CANCELED')).status, 'CANCELED');
  });

  /** A workflow that runs `childId` as its child (a leaf without one). */
  const runs = (childId?: string) =>
    childId
      ? {
          nodes: [input(), n('sub', 'SubworkflowNode', { workflow_id: childId, input_map: { x: 'in.x' } })],
          links: [l('in', 'sub')],
        }
      : echoChild();
  async function refusedUpdate(wf: { id: string; name: string }, childId: string) {
    const before = (await admin.get(`/wf/${wf.id}/`)).body;
    const res = await admin.put(`/wf/${wf.id}/`, { name: wf.name, definition: runs(childId) });
    assert.equal(res.status, 422, res.text);
    assert.deepEqual((await admin.get(`/wf/${wf.id}/`)).body.definition, before.definition, 'nothing saved');
    const [detail] = res.body.detail;
    assert.deepEqual(detail.loc, ['body', 'definition', 'nodes', 1, 'config', 'workflow_id']);
    return detail.msg as string;
  }

  it('a cycle is refused when saved, naming the chain: directly and through a third workflow', async () => {
    const a = await save(admin, runs(), 'cycle-A');
    const self = await refusedUpdate(a, a.id);
    assert.match(self, new RegExp(`a cycle: 'cycle-A' \\(${a.id}\\) → 'cycle-A' \\(${a.id}\\)`));
    const b = await save(admin, runs(a.id), 'cycle-B');
    const direct = await refusedUpdate(a, b.id);
    assert.match(direct, new RegExp(`'cycle-A' \\(${a.id}\\) → 'cycle-B' \\(${b.id}\\) → 'cycle-A' \\(${a.id}\\)`));
    const c = await save(admin, runs(b.id), 'cycle-C');
    const through = await refusedUpdate(a, c.id);
    assert.match(
      through,
      new RegExp(
        `'cycle-A' \\(${a.id}\\) → 'cycle-C' \\(${c.id}\\) → 'cycle-B' \\(${b.id}\\) → 'cycle-A' \\(${a.id}\\)`,
      ),
    );
    assert.equal((await childRuns(admin, a.id)).length, 0, 'nothing ran');
  });

  it('nesting deeper than SPUR_SUBWORKFLOW_MAX_DEPTH (2 here) is refused when saved, and when run after a change', async () => {
    const leaf = await save(admin, runs());
    const middle = await save(admin, runs(leaf.id));
    const top = await save(admin, runs(middle.id), 'depth-top');
    const res = await admin.post('/wf/', { name: 'depth-over', definition: runs(top.id) });
    assert.equal(res.status, 422, res.text);
    assert.match(res.body.detail[0].msg, /nesting 3 deep: .* over the limit of 2 \(SPUR_SUBWORKFLOW_MAX_DEPTH\)/);
    // Two deep when saved; the leaf then gains a child of its own, so a run would go three deep.
    const deeper = await save(admin, runs());
    const edited = await admin.put(`/wf/${leaf.id}/`, { name: leaf.name, definition: runs(deeper.id) });
    assert.equal(edited.status, 200, edited.text);
    const started = await admin.post(`/wf/${top.id}/start_run/`, { initial_inputs: { in: { x: 'deep' } } });
    assert.equal((await waitForRun(admin, started.body.id)).status, 'FAILED');
    const leafRun = await childRunOf(admin, leaf.id);
    const failed = (await waitForRun(admin, leafRun.id)) as Run;
    assert.match(
      task(failed, 'sub').error,
      /^The child run did not start: the child run would be nested 3 deep, over the limit of 2 \(SPUR_SUBWORKFLOW_MAX_DEPTH\)/,
    );
    assert.equal((await childRuns(admin, deeper.id)).length, 0, 'the too-deep child never ran');
  });

  it('inside a loop it is refused when saved; a partial run (a preview) does not run it', async () => {
    const child = await save(admin, echoChild());
    const looped = await admin.post('/wf/', {
      name: 'looped',
      definition: {
        nodes: [
          input(),
          n('loop', 'ForLoopNode', { num_iterations: 1 }),
          n('sub', 'SubworkflowNode', { workflow_id: child.id }, { parent_id: 'loop' }),
        ],
        links: [l('in', 'loop')],
      },
    });
    assert.equal(looped.status, 422, looped.text);
    assert.ok(
      looped.body.detail.some((d: any) => d.loc.join('.') === 'body.definition.nodes.2.parent_id'),
      JSON.stringify(looped.body),
    );
    const parent = await save(admin, parentOf(child.id));
    const partial = await admin.post(`/wf/${parent.id}/run_partial/`, {
      node_id: 'sub',
      initial_inputs: { in: { y: 'p' } },
      partial_outputs: {},
    });
    // A preview leaves out the outputs of the nodes it could not compute, as for any failing node.
    assert.equal(partial.status, 200, partial.text);
    assert.deepEqual(partial.body, { in: { y: 'p' } });
    assert.equal((await childRuns(admin, child.id)).length, 0, 'no child run');
  });

  it("another workspace's workflow is refused when saved, as an id that never existed, and never runs; a child runs in its parent's workspace", async () => {
    const made = await admin.post('/access/workspaces/', { name: 'sub-team' });
    assert.equal(made.status, 201, made.text);
    const team = client(
      engine.api.baseUrl,
      bearer((await memberWithKey(admin, made.body.id, 'subbob', 'builder')).key.key),
    );
    const theirs = await save(team, echoChild(), 'theirs');
    const ours = await save(admin, echoChild(), 'ours');
    for (const [who, target] of [
      [admin, theirs.id],
      [team, ours.id],
      [team, 'S999999'],
    ] as const) {
      const before = ((await who.get('/wf/?page_size=100')).body as unknown[]).length;
      const res = await who.post('/wf/', { name: `reach-${target}`, definition: parentOf(target) });
      assert.equal(res.status, 422, res.text);
      assert.equal(res.body.detail[0].msg, `Value error, SubworkflowNode 'sub': workflow ${target} was not found`);
      assert.equal(((await who.get('/wf/?page_size=100')).body as unknown[]).length, before, 'nothing saved');
    }
    assert.equal((await childRuns(team, theirs.id)).length, 0);
    assert.equal((await childRuns(admin, ours.id)).length, 0);
    // Within its own workspace it runs, and the child run is that workspace's alone.
    const parent = await save(team, parentOf(theirs.id), 'their-parent');
    const ran = await team.post(`/wf/${parent.id}/run/`, { initial_inputs: { in: { y: 'team' } } });
    assert.deepEqual(ran.body.out, { got: 'team' }, ran.text);
    const [teamChild] = await childRuns(team, theirs.id);
    assert.equal(teamChild?.run_type, 'subworkflow');
    assert.equal((await admin.get(`/run/${teamChild?.id}/`)).status, 404);
  });

  it('hostile input_map keys and paths are refused when saved; a template in a value reaches the child as plain text', async () => {
    const child = await save(admin, echoChild());
    for (const map of [{ 'a.b': 'in.y' }, { constructor: 7 }, { x: 'in.y'.repeat(300) }]) {
      const res = await admin.post('/wf/', {
        name: 'hostile-map',
        definition: parentOf(child.id, { input_map: JSON.parse(JSON.stringify(map)) }),
      });
      assert.equal(res.status, 422, `${JSON.stringify(map)}: ${res.text}`);
    }
    const rawProto = await admin.post('/wf/', {
      name: 'hostile-proto',
      definition: JSON.parse(
        JSON.stringify(parentOf(child.id)).replace('"input_map":{"x"', '"input_map":{"__proto__"'),
      ),
    });
    assert.equal(rawProto.status, 422, rawProto.text);
    const parent = await save(admin, parentOf(child.id));
    // A template is a value like any other: the child echoes it, nothing renders it.
    const template = '{{ secrets }}{% for x in range(99999999) %}{% endfor %}';
    const plain = await admin.post(`/wf/${parent.id}/run/`, { initial_inputs: { in: { y: template } } });
    assert.deepEqual(plain.body.out, { got: template });
  });
});

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { startApi } from '../support/api';
import { until } from '../support/exec-log';
import { isFinal, startEngine, waitForRun, type Engine } from '../support/engine';
import { client } from '../support/http';
import { input, l, n } from '../support/graphs';
import { eventually, parentOf, pidsWith, processEnded, tokenedWait } from '../support/python-runs';
import { runWorkflowId } from '../../src/contracts/workflow-names';

/** in → gate (human) → after; in → side (independent branch). */
function gated(gateConfig: Record<string, unknown> = {}) {
  return {
    nodes: [
      input(),
      n('gate', 'HumanInterventionNode', { message: 'Check the numbers', ...gateConfig }),
      n('after', 'OutputNode'),
      n('side', 'OutputNode', { output_map: { x: 'in.x' } }),
    ],
    links: [l('in', 'gate'), l('gate', 'after'), l('in', 'side')],
  };
}

describe('e2e: human in the loop', function () {
  this.timeout(60_000);
  let engine: Engine;
  before(async () => {
    engine = await startEngine();
  });
  after(() => engine?.close());

  async function pausedRun(definition: unknown, x: unknown = 1) {
    const { http } = engine;
    const wf = (await http.post('/wf/', { name: `pause-${Math.random()}`, definition })).body;
    const res = await http.post(`/wf/${wf.id}/start_run/`, { initial_inputs: { in: { x } } });
    const run = await waitForRun(http, res.body.id, (r) => r.status === 'PAUSED');
    return { wf, run };
  }
  const task = (run: { tasks: { node_id: string }[] }, id: string) =>
    run.tasks.find((t) => t.node_id === id) as Record<string, any>;
  const act = (runId: string, body: Record<string, unknown>) =>
    engine.http.post(`/wf/process_pause_action/${runId}/`, body);

  it('pauses at the node: task PAUSED with its pass-through, run PAUSED, pause record with the message; the other branch finishes', async () => {
    const { run } = await pausedRun(gated(), 'v');
    assert.equal(task(run, 'gate').status, 'PAUSED');
    assert.deepEqual(task(run, 'gate').outputs, { in: { x: 'v' } });
    assert.equal(task(run, 'after').status, 'PENDING');
    const done = await waitForRun(engine.http, run.id, (r: any) => task(r, 'side')?.status === 'COMPLETED');
    assert.equal(done.status, 'PAUSED');
    const history = (await engine.http.get(`/wf/pause_history/${run.id}/`)).body;
    assert.equal(history.length, 1);
    assert.equal(history[0].id, `PH_${run.id}_gate`);
    assert.equal(history[0].pause_message, 'Check the numbers');
    assert.deepEqual(history[0].input_data, { in: { x: 'v' } });
    assert.equal(history[0].resume_time, null);
    const paused = (await engine.http.get('/wf/paused_workflows/?page_size=100')).body;
    const mine = paused.find((p: any) => p.run.id === run.id);
    assert.equal(mine.current_pause.node_id, 'gate');
    assert.deepEqual(
      mine.workflow.nodes.map((x: any) => x.id),
      ['in', 'gate', 'after', 'side'],
    );
  });

  it('APPROVE keeps the original data and adds the human keys; the run completes; the record is filled', async () => {
    const { run } = await pausedRun(gated());
    const res = await act(run.id, {
      action: 'APPROVE',
      user_id: 'alice',
      inputs: { in: 'overwrite attempt', note: 'ok' },
      comments: 'fine',
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.ok(['RUNNING', 'COMPLETED'].includes(res.body.status), res.body.status);
    assert.deepEqual(task(res.body, 'gate').outputs, { in: { x: 1 }, note: 'ok' });
    // Answered once the action is recorded: the record is filled as soon as the answer arrives.
    const [record] = (await engine.http.get(`/wf/pause_history/${run.id}/`)).body;
    const done = await waitForRun(engine.http, run.id);
    assert.equal(done.status, 'COMPLETED');
    assert.deepEqual(done.outputs.after, { gate: { in: { x: 1 }, note: 'ok' } });
    assert.equal(record.resume_user_id, 'alice');
    assert.equal(record.resume_action, 'APPROVE');
    assert.equal(record.comments, 'fine');
    assert.ok(Date.parse(record.resume_time) >= Date.parse(record.pause_time));
  });

  it('answers an action with the node after the pause started (RUNNING) and the pause record filled', async () => {
    const slowNext = n('next', 'PythonFuncNode', {
      code: 'return {"y": input_model["gate"]["note"]}',
      timeout_seconds: 60,
      heartbeat_timeout_seconds: 5,
      output_schema: { y: 'string' },
    });
    const { run } = await pausedRun({
      nodes: [input(), n('gate', 'HumanInterventionNode'), slowNext],
      links: [l('in', 'gate'), l('gate', 'next')],
    });
    assert.equal(task(run, 'next').status, 'PENDING');
    const res = await act(run.id, { action: 'APPROVE', user_id: 'dora', inputs: { note: 'go' }, comments: 'now' });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(task(res.body, 'gate').status, 'COMPLETED');
    assert.deepEqual(task(res.body, 'gate').outputs, { in: { x: 1 }, note: 'go' });
    assert.ok(['RUNNING', 'COMPLETED'].includes(task(res.body, 'next').status), task(res.body, 'next').status);
    assert.ok(['RUNNING', 'COMPLETED'].includes(res.body.status), res.body.status);
    const [record] = (await engine.http.get(`/wf/pause_history/${run.id}/`)).body;
    assert.deepEqual([record.resume_action, record.resume_user_id, record.comments], ['APPROVE', 'dora', 'now']);
    assert.ok(record.resume_time);
    const done = await waitForRun(engine.http, run.id);
    assert.equal(done.status, 'COMPLETED');
    assert.deepEqual(task(done, 'next').outputs, { y: 'go' });
  });

  it('OVERRIDE lets the human keys win over the pass-through', async () => {
    const { run } = await pausedRun(gated());
    const res = await act(run.id, { action: 'OVERRIDE', user_id: 'bob', inputs: { in: { x: 99 } } });
    assert.equal(res.status, 200);
    const done = await waitForRun(engine.http, run.id);
    assert.deepEqual(done.outputs.after, { gate: { in: { x: 99 } } });
    assert.equal((await engine.http.get(`/wf/pause_history/${run.id}/`)).body[0].resume_action, 'OVERRIDE');
  });

  it('DECLINE cancels the dependents; other branches finish; the run ends CANCELED naming user and node', async () => {
    const { run } = await pausedRun(gated());
    const res = await act(run.id, { action: 'DECLINE', user_id: 'carol', inputs: {} });
    assert.equal(res.status, 200);
    const done = await waitForRun(engine.http, run.id);
    assert.equal(done.status, 'CANCELED');
    assert.match(done.message, /carol/);
    assert.match(done.message, /gate/);
    assert.equal(task(done, 'gate').status, 'CANCELED');
    assert.equal(task(done, 'after').status, 'CANCELED');
    assert.equal(task(done, 'side').status, 'COMPLETED');
    assert.equal((await engine.http.get(`/wf/pause_history/${run.id}/`)).body[0].resume_action, 'DECLINE');
  });

  it('refuses a second action, an action on a run that is not paused, a bad body and an unknown run', async () => {
    const { run } = await pausedRun(gated());
    assert.equal((await act(run.id, { action: 'APPROVE', user_id: 'a', inputs: {} })).status, 200);
    await waitForRun(engine.http, run.id);
    const again = await act(run.id, { action: 'APPROVE', user_id: 'a', inputs: {} });
    assert.equal(again.status, 400);
    assert.deepEqual(again.body, { detail: 'Run is not in a paused state' });
    const bad = await act(run.id, { action: 'MAYBE', user_id: 'a', inputs: {} });
    assert.equal(bad.status, 422);
    assert.deepEqual(bad.body.detail[0].loc, ['body', 'action']);
    assert.equal(bad.body.detail[0].msg, "Input should be 'APPROVE', 'DECLINE' or 'OVERRIDE'");
    assert.equal((await act(run.id, { user_id: 'a', inputs: {} })).status, 422);
    assert.equal((await act('R987654', { action: 'APPROVE', user_id: 'a', inputs: {} })).status, 404);
    assert.equal((await engine.http.get('/wf/pause_history/R987654/')).status, 404);
  });

  it('handles two pauses (in sequence and in parallel), each with its own record; PAUSED while any is open', async () => {
    const def = {
      nodes: [
        input(),
        n('g1', 'HumanInterventionNode'),
        n('g2', 'HumanInterventionNode'),
        n('g3', 'HumanInterventionNode'),
        n('end', 'MergeNode'),
      ],
      links: [l('in', 'g1'), l('g1', 'g2'), l('in', 'g3'), l('g2', 'end'), l('g3', 'end')],
    };
    const { run } = await pausedRun(def);
    await waitForRun(
      engine.http,
      run.id,
      (r: any) => task(r, 'g3').status === 'PAUSED' && task(r, 'g1').status === 'PAUSED',
    );
    assert.equal((await act(run.id, { action: 'APPROVE', user_id: 'u1', inputs: {} })).status, 200); // the oldest open pause
    let now = await waitForRun(engine.http, run.id, (r: any) => task(r, 'g2').status === 'PAUSED');
    assert.equal(now.status, 'PAUSED');
    assert.equal((await act(run.id, { action: 'APPROVE', user_id: 'u2', inputs: {} })).status, 200);
    now = (await engine.http.get(`/run/${run.id}/`)).body;
    assert.equal(now.status, 'PAUSED', 'one pause is still open');
    assert.equal((await act(run.id, { action: 'APPROVE', user_id: 'u3', inputs: {} })).status, 200);
    const done = await waitForRun(engine.http, run.id);
    assert.equal(done.status, 'COMPLETED');
    const history = (await engine.http.get(`/wf/pause_history/${run.id}/`)).body;
    assert.equal(history.length, 3);
    assert.deepEqual(history.map((h: any) => h.resume_user_id).sort(), ['u1', 'u2', 'u3']);
    assert.ok(Date.parse(history[0].pause_time) >= Date.parse(history[2].pause_time), 'newest first');
    const pages = [];
    for (const page of [1, 2, 3, 4])
      pages.push(...(await engine.http.get(`/wf/pause_history/${run.id}/?page=${page}&page_size=1`)).body);
    assert.deepEqual(
      pages.map((h: any) => h.id),
      history.map((h: any) => h.id),
      'pages of one hold the same records in the same order',
    );
  });

  it('a run whose record does not list its pauses (started by a version before the list) is still found: inbox, history, an action', async () => {
    const { run } = await pausedRun(gated(), 'old');
    // As the version before kept the run's event head: open pauses only, no list of every pause.
    const { Run } = engine.api.models;
    const stored = await Run.findById(run.id, { event_head: 1 }).lean<{ event_head: string }>();
    const head = JSON.parse(stored?.event_head ?? 'null');
    assert.deepEqual(head.opened, [`${run.id}:gate:1`], 'this version lists the pause it opened');
    delete head.opened;
    await Run.updateOne({ _id: run.id }, { $set: { event_head: JSON.stringify(head) } });

    const inbox = (await engine.http.get('/wf/paused_workflows/?page_size=100')).body;
    assert.equal(inbox.find((p: any) => p.run.id === run.id)?.current_pause.id, `PH_${run.id}_gate`);
    const history = (await engine.http.get(`/wf/pause_history/${run.id}/`)).body;
    assert.deepEqual(
      history.map((h: any) => [h.id, h.resume_time]),
      [[`PH_${run.id}_gate`, null]],
    );
    // A bulk action filtered by the node a run is paused at finds it by its pause's record.
    const atNode = (nodeId: string, dryRun: boolean) =>
      engine.http.post('/runs/actions/', {
        filter: { run_ids: [run.id], node_id: nodeId },
        action: 'approve',
        dry_run: dryRun,
      });
    assert.equal((await atNode('side', true)).body.matched, 0, 'not paused at that node');
    const made = await atNode('gate', false);
    assert.equal(made.status, 200, made.text);
    assert.equal(made.body.matched, 1, made.text);
    let outcome: { status: string; results: { outcome: string; error: string | null }[] } | undefined;
    await until('the action to end', async () => {
      outcome = (await engine.http.get(`/runs/actions/${made.body.id}/`)).body;
      return outcome?.status !== 'RUNNING';
    });
    assert.deepEqual(
      outcome?.results.map((r) => [r.outcome, r.error]),
      [['approved', null]],
    );
    assert.equal((await waitForRun(engine.http, run.id)).status, 'COMPLETED');
    const [decided] = (await engine.http.get(`/wf/pause_history/${run.id}/`)).body;
    assert.equal(decided.resume_action, 'APPROVE');
  });

  it('a bulk action filtered by node_id matches the runs paused at that node, not those paused at another (one whose id begins with it) or decided', async () => {
    const atGate = await pausedRun(gated(), 'a');
    const decided = await pausedRun(gated(), 'b');
    assert.equal((await act(decided.run.id, { action: 'APPROVE', user_id: 'u', inputs: {} })).status, 200);
    await waitForRun(engine.http, decided.run.id);
    const elsewhere = await pausedRun(
      {
        // Node ids may hold colons, as pause ids do (`<run>:<node>:<n>`).
        nodes: [input(), n('gate:2', 'HumanInterventionNode'), n('after', 'OutputNode')],
        links: [l('in', 'gate:2'), l('gate:2', 'after')],
      },
      'c',
    );
    const ids = [atGate.run.id, decided.run.id, elsewhere.run.id];
    const matched = async (nodeId: string) => {
      const res = await engine.http.post('/runs/actions/', {
        filter: { run_ids: ids, node_id: nodeId },
        action: 'cancel',
        dry_run: true,
      });
      assert.equal(res.status, 200, res.text);
      return (res.body.results as { run_id: string }[]).map((r) => r.run_id);
    };
    assert.deepEqual(await matched('gate'), [atGate.run.id]);
    assert.deepEqual(await matched('gate:2'), [elsewhere.run.id]);
    assert.deepEqual(await matched('after'), []);
    assert.deepEqual(await matched('gat'), [], 'a prefix of a node id is another node');
  });

  it("approval messages recorded without a mark on their pause (an earlier version's) show once an api starts on the database: it marks their pauses in the background", async () => {
    const { run } = await pausedRun(gated(), 'msg');
    const pauseId = `${run.id}:gate:1`;
    const at = new Date();
    // As a worker of the version before marks recorded it: the message alone.
    await engine.api.models.ApprovalDelivery.create({
      _id: `${pauseId}:notify:1`,
      run_id: run.id,
      pause_id: pauseId,
      notice: 'notify',
      channel: 'slack',
      to: 'C-old',
      user_id: 'approver',
      status: 'sent',
      attempts: 1,
      error: null,
      created_at: at,
      updated_at: at,
    });
    const notificationsOf = async (http: ReturnType<typeof client>) => {
      const res = await http.get(`/wf/pause_history/${run.id}/`);
      assert.equal(res.status, 200);
      return (res.body[0].notifications as Array<{ id: string; to: string; status: string }>).map((d) => [
        d.id,
        d.to,
        d.status,
      ]);
    };
    assert.deepEqual(await notificationsOf(engine.http), [], 'unmarked, its pause reads none');

    // A second api on the same database and queue, as a restart or an upgrade starts one; it marks
    // in the background once it serves.
    const restarted = await startApi(engine.api.env);
    try {
      await restarted.marked;
      const expected = [[`${pauseId}:notify:1`, 'C-old', 'sent']];
      assert.deepEqual(await notificationsOf(client(restarted.baseUrl)), expected);
      assert.deepEqual(await notificationsOf(engine.http), expected, 'every process reads it once its pause is marked');
      const inbox = (await engine.http.get('/wf/paused_workflows/?page_size=100')).body;
      assert.deepEqual(
        inbox.find((p: any) => p.run.id === run.id)?.current_pause.notifications.map((d: any) => d.id),
        [`${pauseId}:notify:1`],
      );
    } finally {
      await restarted.close();
    }
  });

  it('applies the timeout action durably, recorded as system:timeout', async () => {
    const { run } = await pausedRun(gated({ timeout_seconds: 1, timeout_action: 'APPROVE' }));
    const done = await waitForRun(engine.http, run.id, isFinal);
    assert.equal(done.status, 'COMPLETED');
    const [record] = (await engine.http.get(`/wf/pause_history/${run.id}/`)).body;
    assert.equal(record.resume_user_id, 'system:timeout');
    assert.equal(record.resume_action, 'APPROVE');
    const declined = await pausedRun(gated({ timeout_seconds: 1 }));
    assert.equal((await waitForRun(engine.http, declined.run.id, isFinal)).status, 'CANCELED');
  });

  it('answers a blocking run that hits a pause with 200 and the outputs so far; the run stays PAUSED', async () => {
    const { http } = engine;
    const wf = (await http.post('/wf/', { name: 'blocking pause', definition: gated() })).body;
    const res = await http.post(`/wf/${wf.id}/run/`, { initial_inputs: { in: { x: 5 } } });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.in, { x: 5 });
    assert.deepEqual(res.body.gate, { in: { x: 5 } });
    assert.equal('after' in res.body, false);
    const [run] = (await http.get(`/wf/${wf.id}/runs/`)).body;
    assert.equal(run.status, 'PAUSED');
  });

  it('cancels a paused run: open tasks CANCELED, run CANCELED with end_time and PySpur’s message; then 400', async () => {
    const { run } = await pausedRun(gated());
    const res = await engine.http.post(`/wf/cancel_workflow/${run.id}/`);
    assert.equal(res.status, 200);
    assert.equal(res.body.status, 'CANCELED');
    assert.equal(res.body.message, 'Workflow has been canceled successfully.');
    assert.ok(res.body.end_time);
    assert.equal(task(res.body, 'gate').status, 'CANCELED');
    assert.equal(task(res.body, 'after').status, 'CANCELED');
    const again = await engine.http.post(`/wf/cancel_workflow/${run.id}/`);
    assert.equal(again.status, 400);
    assert.equal(
      again.body.detail,
      'Run is in state RunStatus.CANCELED and cannot be canceled.Only PAUSED or RUNNING runs can be canceled.',
    );
    assert.equal((await engine.http.post('/wf/cancel_workflow/R987654/')).status, 404);
    assert.equal((await act(run.id, { action: 'APPROVE', user_id: 'a', inputs: {} })).status, 400);
  });

  it('cancels a paused run whose Temporal workflow is gone (terminated outside Spur): recorded at once, not left PAUSED', async () => {
    const { run } = await pausedRun(gated());
    const workflowId = runWorkflowId(run.id, engine.api.config.temporal.workflowIdPrefix);
    await engine.api.temporal.workflow.getHandle(workflowId).terminate('an operator cleaned up');
    assert.equal((await engine.http.get(`/run/${run.id}/`)).body.status, 'PAUSED', 'nothing wrote the record');
    // The answer itself carries the cancel: nothing else could have written it (the workflow is gone).
    const res = await engine.http.post(`/wf/cancel_workflow/${run.id}/`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.status, 'CANCELED');
    assert.ok(res.body.end_time);
    assert.equal(task(res.body, 'gate').status, 'CANCELED');
    assert.equal(task(res.body, 'after').status, 'CANCELED');
  });

  it('cancels a running Python node: its processes end and the node after it never runs', async () => {
    const { http } = engine;
    const token = `spur-cancel-${randomBytes(6).toString('hex')}`;
    const def = {
      nodes: [
        input(),
        n('py', 'PythonFuncNode', {
          code: `${tokenedWait(token, 30)}\nreturn {"output": "too late"}`,
          timeout_seconds: 60,
        }),
        n('after', 'OutputNode'),
      ],
      links: [l('in', 'py'), l('py', 'after')],
    };
    const wf = (await http.post('/wf/', { name: 'cancel python', definition: def })).body;
    const started = (await http.post(`/wf/${wf.id}/start_run/`, { initial_inputs: { in: { x: 1 } } })).body;
    const child = await eventually('the node starts its child', () => pidsWith(token)[0]);
    const node = parentOf(child);
    assert.equal(processEnded(node), false, 'the node runs before the cancel');
    // The node waits 30 s: an answer that says CANCELED did not wait for it (latency: the bench).
    const res = await http.post(`/wf/cancel_workflow/${started.id}/`);
    assert.equal(res.body.status, 'CANCELED');
    assert.equal(task(res.body, 'py').status, 'CANCELED');
    assert.equal(task(res.body, 'after').status, 'CANCELED');
    await eventually(
      'the node and its child end',
      () => (processEnded(node) && processEnded(child) ? true : undefined),
      20_000,
    );
    const run = await waitForRun(http, started.id, (r: any) => isFinal(r));
    assert.equal(task(run, 'after').status, 'CANCELED');
    assert.ok(!run.outputs || !('after' in run.outputs), JSON.stringify(run.outputs));
  });
});

import assert from 'node:assert/strict';
import { approvalTokens } from '../../src/approvals/approval-token';
import { type Engine, startEngine, waitForRun } from '../support/engine';
import { type FakeMcpServer, startFakeMcpServer } from '../support/fake-mcp-server';
import { gatedByHuman, input, l, n } from '../support/graphs';
import { type SseEvent, openSse } from '../support/sse';

// Values over SPUR_VALUE_REF_BYTES are stored once and travel as sealed references. A person or a
// client reads the value, never the reference; and a reference is read through only where Spur
// put it, never when one copied from another run comes back from outside (here: an MCP server).

const REF_KEY = '__spur_value_ref__';
/** Over the 1 KiB threshold set below (so stored by reference), under an event's 16 KiB inline limit. */
const MID_VALUE = `mid-value-${'m'.repeat(4000)}`;
/** Over an event's 16 KiB inline limit: an event says it is by reference (null), never the reference. */
const BIG_VALUE = `big-value-${'b'.repeat(20_000)}`;

describe('security: stored values are read, never their references, and only where Spur put them', function () {
  this.timeout(180_000);
  let engine: Engine;
  let mcp: FakeMcpServer;

  before(async () => {
    engine = await startEngine({ SPUR_VALUE_REF_BYTES: '1024' });
    mcp = await startFakeMcpServer({ relay: true });
  });
  after(async () => {
    await engine?.close();
    await mcp?.close();
  });

  async function pausedRun(x: string): Promise<{ runId: string; pauseId: string }> {
    const wf = (await engine.http.post('/wf/', { name: `gated-${Math.random()}`, definition: gatedByHuman })).body;
    const started = await engine.http.post(`/wf/${wf.id}/start_run/`, { initial_inputs: { in: { x } } });
    assert.equal(started.status, 200, JSON.stringify(started.body));
    const runId = started.body.id as string;
    await waitForRun(engine.http, runId, (r) => r.status === 'PAUSED');
    // The pause's own id, as the worker puts it in a link's token (the API shows PySpur's `PH_…`).
    const pause = await engine.api.models.Pause.findOne({ run_id: runId }, { _id: 1 }).lean<{ _id: string }>();
    assert.ok(pause, 'the pause is recorded');
    return { runId, pauseId: pause._id };
  }

  /** The approval link's page, its token signed with the api's key as a worker signs it. */
  async function approvalPage(runId: string, pauseId: string): Promise<string> {
    const token = approvalTokens(Buffer.from(engine.api.env.SPUR_SECRET_KEY as string, 'base64')).mint({
      runId,
      pauseId,
      userId: 'ops@example.com',
      channel: 'email',
      expiresAt: Math.floor(Date.now() / 1000) + 3600,
    });
    const page = await fetch(`${new URL(engine.api.baseUrl).origin}/approve/${token}`);
    assert.equal(page.status, 200);
    return page.text();
  }

  /** The run's whole event stream, once it has ended (the test approves the pause to end it). */
  async function wholeStream(runId: string): Promise<SseEvent[]> {
    const stream = await openSse(`${engine.api.baseUrl}/run/${runId}/events/`);
    await stream.waitFor((es) => es.some((e) => e.event === 'run.paused'));
    const approve = { action: 'APPROVE', user_id: 'ops', inputs: {} };
    assert.equal((await engine.http.post(`/wf/process_pause_action/${runId}/`, approve)).status, 200);
    assert.equal(await stream.ended, true);
    return stream.events;
  }

  it('the approval page of a pause shows its stored input, never a reference', async () => {
    for (const value of [MID_VALUE, BIG_VALUE]) {
      const { runId, pauseId } = await pausedRun(value);
      const page = await approvalPage(runId, pauseId);
      assert.ok(page.includes(value), 'the page shows the input');
      assert.ok(!page.includes(REF_KEY), 'and no reference');
    }
  });

  it('the events stream carries a stored value up to 16 KiB inline, as the value', async () => {
    const { runId } = await pausedRun(MID_VALUE);
    const events = await wholeStream(runId);
    const paused = events.find((e) => e.event === 'run.paused');
    assert.deepEqual(paused?.data.pause.input_data, { in: { x: MID_VALUE } });
    const gate = events.find((e) => e.event === 'task.completed' && e.data.node_id === 'gate');
    assert.equal(gate?.data.outputs_by_reference, false);
    assert.equal(gate?.data.outputs.in.x, MID_VALUE);
    assert.ok(!JSON.stringify(events).includes(REF_KEY), 'no event holds a reference');
  });

  it('the events stream says a larger stored value is by reference (null, its size), never sends the reference', async () => {
    const { runId } = await pausedRun(BIG_VALUE);
    const events = await wholeStream(runId);
    assert.equal(events.find((e) => e.event === 'run.paused')?.data.pause.input_data, null);
    const gate = events.find((e) => e.event === 'task.completed' && e.data.node_id === 'gate');
    assert.equal(gate?.data.outputs_by_reference, true);
    assert.equal(gate?.data.outputs, null);
    assert.ok(gate?.data.outputs_bytes > BIG_VALUE.length, 'counted at the stored size');
    assert.ok(!JSON.stringify(events).includes(REF_KEY), 'no event holds a reference');
  });

  it('a reference copied from run A, returned by an MCP server into run B of another workflow, is refused, not read through', async () => {
    const secret = `run-a-secret-${'s'.repeat(4000)}`;
    const a = (
      await engine.http.post('/wf/', {
        name: `a-${Math.random()}`,
        definition: {
          nodes: [input(), n('out', 'OutputNode')],
          links: [l('in', 'out')],
        },
      })
    ).body;
    const runA = await engine.http.post(`/wf/${a.id}/run/`, { initial_inputs: { in: { x: secret } } });
    assert.equal(runA.status, 200, JSON.stringify(runA.body));
    // What someone who saw run A's stored record (or a leak of it) could copy: its sealed reference.
    const [recordA] = (await engine.http.get(`/wf/${a.id}/runs/`)).body;
    const stored = await engine.api.models.Run.findById(recordA.id).lean<{ initial_inputs: string }>();
    const copied = JSON.parse(stored?.initial_inputs ?? 'null')?.in?.x;
    assert.ok(copied?.[REF_KEY]?.seal, `run A stores its input by a sealed reference: ${stored?.initial_inputs}`);

    mcp.relay({ leak: copied });
    const b = (
      await engine.http.post('/wf/', {
        name: `b-${Math.random()}`,
        definition: {
          nodes: [
            input(),
            n('mcp', 'MCPToolNode', { server_url: `${mcp.url}/mcp`, tool: 'relay' }),
            n('out', 'OutputNode', { output_map: { leak: 'mcp.json' } }),
          ],
          links: [l('in', 'mcp'), l('mcp', 'out')],
        },
      })
    ).body;
    const runB = await engine.http.post(`/wf/${b.id}/run/`, { initial_inputs: { in: { x: 'go' } } });
    assert.equal(mcp.calls.at(-1)?.tool, 'relay', 'the server answered with the copy');
    const [recordB] = (await engine.http.get(`/wf/${b.id}/runs/`)).body;
    const task = recordB.tasks.find((t: { node_id: string }) => t.node_id === 'mcp');
    assert.equal(recordB.status, 'FAILED');
    assert.match(
      task.error,
      /The output of node .* holds a copy of a stored value's reference \('__spur_value_ref__' at json\.leak\)/,
    );
    const events = await openSse(`${engine.api.baseUrl}/run/${recordB.id}/events/`);
    await events.ended;
    for (const [what, text] of [
      ['the run answer', JSON.stringify(runB.body)],
      ['the run record', JSON.stringify((await engine.http.get(`/run/${recordB.id}/`)).body)],
      ['the events', JSON.stringify(events.events)],
    ])
      assert.ok(!text.includes(secret), `run A's value is not in ${what} of run B`);
  });
});

import assert from 'node:assert/strict';
import { hashApiKey } from '../../src/http/api-keys';
import { startApi, type TestApi } from '../support/api';
import { input, l, n } from '../support/graphs';
import { waitForRun } from '../support/engine';
import { client } from '../support/http';
import { pollDelays } from '../support/poll';

const ADMIN_KEY = 'spur_idempotency-per-user-admin';
const echo = { nodes: [input(), n('out', 'OutputNode', { output_map: { x: 'in.x' } })], links: [l('in', 'out')] };
/** Two human pauses in a row: once the first is decided, the run waits at the second. */
const twoGates = {
  nodes: [
    input(),
    n('first', 'HumanInterventionNode', { message: 'First?' }),
    n('second', 'HumanInterventionNode', { message: 'Second?' }),
    n('out', 'OutputNode'),
  ],
  links: [l('in', 'first'), l('first', 'second'), l('second', 'out')],
};

describe('security: idempotency keys are per signed-in user and workspace', function () {
  this.timeout(60_000);
  let api: TestApi;
  let origin: string;
  const admin = () => client(api.baseUrl, { authorization: `Bearer ${ADMIN_KEY}` });

  before(async () => {
    api = await startApi({ SPUR_API_KEY_HASHES: hashApiKey(ADMIN_KEY) }, { hostWorker: true });
    origin = api.baseUrl.replace(/\/api$/, '');
  });
  after(async () => api?.close());

  async function signIn(username: string): Promise<ReturnType<typeof client>> {
    const password = `${username} has a long password`;
    const made = await admin().post('/access/users/', { username, role: 'operator', password });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    const res = await fetch(`${origin}/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin },
      body: new URLSearchParams({ username, password }).toString(),
    });
    assert.equal(res.status, 303);
    const cookie = (res.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
    return client(api.baseUrl, { cookie, origin });
  }

  it("one user's Idempotency-Key never answers another user with the first one's run", async () => {
    const wf = await admin().post('/wf/', { name: 'idempotency per user', definition: echo });
    assert.equal(wf.status, 200, JSON.stringify(wf.body));
    const [ann, ben] = [await signIn('ann'), await signIn('ben')];
    const body = { initial_inputs: { in: { x: 'same' } } };
    const headers = { 'Idempotency-Key': 'shared-key-1' };
    const first = await ann.request('POST', `/wf/${wf.body.id}/start_run/`, body, headers);
    const second = await ben.request('POST', `/wf/${wf.body.id}/start_run/`, body, headers);
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.equal(second.status, 200, JSON.stringify(second.body));
    assert.equal(second.headers.get('idempotent-replayed'), null);
    assert.notEqual(second.body.id, first.body.id);
    await waitForRun(admin(), first.body.id);
    // The same user's retry is still a replay.
    const again = await ann.request('POST', `/wf/${wf.body.id}/start_run/`, body, headers);
    assert.equal(again.body.id, first.body.id);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
  });

  it("a user's Idempotency-Key sent from another of their workspaces to the first one's run or workflow is 404, and decides or starts nothing there", async () => {
    const made = await admin().post('/access/workspaces/', { name: 'team-b' });
    assert.equal(made.status, 201, made.text);
    const erin = await signIn('erin');
    const erinId = (await erin.get('/access/me/')).body.user.id as string;
    const member = await admin().put(`/access/workspaces/${made.body.id}/members/${erinId}`, { role: 'operator' });
    assert.equal(member.status, 200, member.text);
    const wf = await admin().post('/wf/', { name: 'two gates', definition: twoGates });
    assert.equal(wf.status, 200, wf.text);

    // In default: Erin starts a run and decides its first pause, each under a key.
    const start = { initial_inputs: { in: { x: 'hi' } } };
    const started = await erin.request('POST', `/wf/${wf.body.id}/start_run/`, start, { 'Idempotency-Key': 'start-1' });
    assert.equal(started.status, 200, started.text);
    const run = started.body.id as string;
    await waitForRun(admin(), run, (r) => r.status === 'PAUSED');
    const decision = { action: 'APPROVE', user_id: 'current-user', inputs: {}, comments: 'first' };
    const decided = await erin.request('POST', `/wf/process_pause_action/${run}/`, decision, {
      'Idempotency-Key': 'decide-1',
    });
    assert.equal(decided.status, 200, decided.text);
    const history = async () =>
      ((await admin().get(`/wf/pause_history/${run}/`)).body as { node_id: string; resume_action: string | null }[])
        .map((p) => `${p.node_id} ${p.resume_action ?? 'open'}`)
        .sort();
    const delays = pollDelays();
    while ((await history()).length < 2) await delays();
    const runsOfWorkflow = async () =>
      ((await admin().get(`/wf/${wf.body.id}/runs/`)).body as { id: string }[]).map((r) => r.id);
    assert.deepEqual(await history(), ['first APPROVE', 'second open']);
    assert.deepEqual(await runsOfWorkflow(), [run]);

    // In team-b, the same requests under the same keys name ids that are not there.
    const switched = await erin.put('/access/me/', { workspace_id: made.body.id });
    assert.equal(switched.status, 200, switched.text);
    const again = await erin.request('POST', `/wf/process_pause_action/${run}/`, decision, {
      'Idempotency-Key': 'decide-1',
    });
    assert.equal(again.status, 404, again.text);
    const restarted = await erin.request('POST', `/wf/${wf.body.id}/start_run/`, start, {
      'Idempotency-Key': 'start-1',
    });
    assert.equal(restarted.status, 404, restarted.text);
    assert.equal(again.headers.get('idempotent-replayed'), null);
    assert.equal(restarted.headers.get('idempotent-replayed'), null);

    // Nothing of default's run changed: its second pause waits, and no other run started.
    assert.deepEqual(await history(), ['first APPROVE', 'second open']);
    assert.equal((await waitForRun(admin(), run, (r) => r.status !== 'RUNNING')).status, 'PAUSED');
    assert.deepEqual(await runsOfWorkflow(), [run]);
  });
});

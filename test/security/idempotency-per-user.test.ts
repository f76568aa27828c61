import assert from 'node:assert/strict';
import { hashApiKey } from '../../src/http/api-keys';
import { startApi, type TestApi } from '../support/api';
import { input, l, n } from '../support/graphs';
import { waitForRun } from '../support/engine';
import { client } from '../support/http';

const ADMIN_KEY = 'spur_idempotency-per-user-admin';
const echo = { nodes: [input(), n('out', 'OutputNode', { output_map: { x: 'in.x' } })], links: [l('in', 'out')] };

describe('security: idempotency keys are per signed-in user', function () {
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
});

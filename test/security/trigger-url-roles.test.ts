import assert from 'node:assert/strict';
import { hashApiKey } from '../../src/http/api-keys';
import { startApi, type TestApi } from '../support/api';
import { bearer, userWithKey } from '../support/access';
import { input, l, n } from '../support/graphs';
import { client } from '../support/http';

const ADMIN_KEY = 'spur_trigger-url-roles-admin';
const echo = { nodes: [input(), n('out', 'OutputNode', { output_map: { x: 'in.x' } })], links: [l('in', 'out')] };

describe('security: a webhook trigger’s URL is its credential, shown only to who may build', function () {
  this.timeout(60_000);
  let api: TestApi;
  before(async () => (api = await startApi({ SPUR_API_KEY_HASHES: hashApiKey(ADMIN_KEY) })));
  after(async () => api?.close());

  it('a viewer reads the trigger without its URL and cannot start a run through it; a builder sees the URL', async () => {
    const admin = client(api.baseUrl, bearer(ADMIN_KEY));
    const wf = await admin.post('/wf/', { name: 'trigger url roles', definition: echo });
    assert.equal(wf.status, 200, wf.text);
    const made = await admin.post(`/wf/${wf.body.id}/triggers/`, { name: 'inbound' });
    assert.equal(made.status, 200, made.text);
    const token = String(made.body.url).split('/').pop() as string;
    assert.ok(token.length > 20);

    const viewer = client(api.baseUrl, bearer((await userWithKey(admin, 'vera', 'viewer')).key.key));
    const builder = client(api.baseUrl, bearer((await userWithKey(admin, 'bo', 'builder')).key.key));
    for (const path of [`/triggers/${made.body.id}/`, `/wf/${wf.body.id}/triggers/`]) {
      const seen = await viewer.get(path);
      assert.equal(seen.status, 200, seen.text);
      assert.equal(seen.text.includes(token), false, `${path} shows a viewer the token`);
      assert.equal((Array.isArray(seen.body) ? seen.body[0] : seen.body).url, null);
      const shown = await builder.get(path);
      assert.equal((Array.isArray(shown.body) ? shown.body[0] : shown.body).url, made.body.url);
    }
    assert.equal(await api.models.Run.countDocuments(), 0, 'no run was started by reading');
  });
});

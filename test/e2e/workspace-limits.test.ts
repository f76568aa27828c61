// Provider limits per workspace (PUT /api/limits/) and across them (PUT /api/limits/fleet/),
// against one fake provider both workspaces' keys point at, which records when it was answering
// each request: a workspace's limit binds its own calls only; the fleet's binds everyone's.
import assert from 'node:assert/strict';
import { hashApiKey } from '../../src/http/api-keys';
import { bearer, memberWithKey } from '../support/access';
import { type Engine, startEngine, waitForRun } from '../support/engine';
import { type FakeLlmServer, mostAtOnce, startFakeLlmServer } from '../support/fake-llm-server';
import { oneLlmCall } from '../support/graphs';
import { client } from '../support/http';
import { settingsReachWorkers } from '../support/settings';
import { fakeProviderSettings } from '../support/llm-engine';

const ADMIN_KEY = 'spur_workspace-limits-admin-key-0123456789';
const MODEL = 'openai/gpt-4o-mini';

const oneCall = oneLlmCall(MODEL);

type Http = ReturnType<typeof client>;

describe("e2e: provider limits are a workspace's own, and the fleet's bind every workspace", function () {
  this.timeout(240_000);
  let engine: Engine;
  let fake: FakeLlmServer;
  let admin: Http;
  let teamAdmin: Http;
  const workflows = new Map<Http, string>();

  before(async () => {
    engine = await startEngine({ SPUR_API_KEY_HASHES: hashApiKey(ADMIN_KEY) });
    fake = await startFakeLlmServer();
    admin = client(engine.api.baseUrl, bearer(ADMIN_KEY));
    const made = await admin.post('/access/workspaces/', { name: 'team-b' });
    assert.equal(made.status, 201, made.text);
    teamAdmin = client(engine.api.baseUrl, bearer((await memberWithKey(admin, made.body.id, 'lead', 'admin')).key.key));
    for (const who of [admin, teamAdmin]) {
      for (const [name, value] of Object.entries(fakeProviderSettings(fake)))
        assert.equal((await who.post('/env-mgmt/', { name, value })).status, 200);
      const wf = await who.post('/wf/', { name: 'limited', definition: oneCall });
      assert.equal(wf.status, 200, wf.text);
      workflows.set(who, wf.body.id);
    }
  });
  afterEach(async () => {
    for (const who of [admin, teamAdmin]) assert.equal((await who.put('/limits/', [])).status, 200);
    await settingsReachWorkers();
    assert.equal((await admin.put('/limits/fleet/', [])).status, 200);
    fake.respondWith(undefined);
  });
  after(async () => {
    await engine?.close();
    await fake?.close();
  });

  /** Starts `count` runs of the workspace's workflow at once, each saying `<tag><i>`; answers when all completed. */
  async function runAll(who: Http, tag: string, count: number): Promise<void> {
    const ids = await Promise.all(
      Array.from({ length: count }, async (_, i) => {
        const res = await who.post(`/wf/${workflows.get(who)}/start_run/`, {
          initial_inputs: { in: { x: `${tag}${i}` } },
        });
        assert.equal(res.status, 200, res.text);
        return res.body.id as string;
      }),
    );
    for (const id of ids) {
      const run = await waitForRun(who, id, undefined, 180_000);
      assert.equal(run.status, 'COMPLETED', `${id}: ${run.message}`);
    }
  }
  const saying = (tag: string) => fake.requests.filter((r) => JSON.stringify(r.body ?? '').includes(`say ${tag}`));

  it("each workspace reads and replaces its own limits; only an installation admin replaces the fleet's", async () => {
    const put = await teamAdmin.put('/limits/', [{ key: 'openai', max_concurrent: 1 }]);
    assert.equal(put.status, 200, put.text);
    await settingsReachWorkers();
    assert.deepEqual(put.body, [{ key: 'openai', max_concurrent: 1 }]);
    assert.deepEqual((await admin.get('/limits/')).body, [], "default's limits are not the team's");
    assert.deepEqual((await teamAdmin.get('/limits/')).body, [{ key: 'openai', max_concurrent: 1 }]);
    const teamWorkspace = (await teamAdmin.get('/access/me/')).body.workspace_id as string;
    const held = await admin.delete(`/access/workspaces/${teamWorkspace}/`);
    assert.equal(held.status, 409, held.text);
    assert.match(held.body.detail, /provider_limits/, 'its limits are among what it holds');

    const refused = await teamAdmin.put('/limits/fleet/', [{ key: 'openai', max_concurrent: 1 }]);
    assert.equal(refused.status, 403, refused.text);
    assert.deepEqual((await admin.get('/limits/fleet/')).body, [], 'the refusal changed nothing');
    assert.equal((await admin.put('/limits/fleet/', [{ key: MODEL, requests_per_minute: 600 }])).status, 200);
    assert.deepEqual((await teamAdmin.get('/limits/fleet/')).body, [{ key: MODEL, requests_per_minute: 600 }]);
  });

  it("team B's max_concurrent 1 holds B's calls to one at a time and none of default's", async () => {
    assert.equal((await teamAdmin.put('/limits/', [{ key: 'openai', max_concurrent: 1 }])).status, 200);
    await settingsReachWorkers();
    // Long enough that calls overlap however slowly a loaded host starts the runs.
    fake.respondWith(() => ({ content: JSON.stringify({ output: 'ok' }), delayMs: 1200 }));
    await Promise.all([runAll(teamAdmin, 'bee', 4), runAll(admin, 'dee', 4)]);
    assert.equal(saying('bee').length, 4);
    assert.equal(mostAtOnce(saying('bee')), 1, "B's calls went one at a time");
    assert.ok(mostAtOnce(saying('dee')) >= 2, `default's calls were not held: ${mostAtOnce(saying('dee'))} at once`);
  });

  it('a fleet-wide max_concurrent 1 holds the calls of every workspace together to one at a time', async () => {
    assert.equal((await admin.put('/limits/fleet/', [{ key: 'openai', max_concurrent: 1 }])).status, 200);
    fake.respondWith(() => ({ content: JSON.stringify({ output: 'ok' }), delayMs: 600 }));
    await Promise.all([runAll(teamAdmin, 'fleet-b', 3), runAll(admin, 'fleet-d', 3)]);
    const both = [...saying('fleet-b'), ...saying('fleet-d')];
    assert.equal(both.length, 6);
    assert.equal(mostAtOnce(both), 1);
  });
});

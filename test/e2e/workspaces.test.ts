import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { MongoClient } from 'mongodb';
import { hashApiKey } from '../../src/http/api-keys';
import { bearer, makeKey, makeUser, memberWithKey } from '../support/access';
import { startApi, type TestApi } from '../support/api';
import { plainRequest, postLogin, sessionCookieOf } from '../support/browser-login';
import { client } from '../support/http';
import { startEngine, waitForRun, type Engine } from '../support/engine';
import { uploadRows } from '../support/evals';
import { runWorkflowId } from '../../src/contracts/workflow-names';
import { stack } from '../support/stack';

const ADMIN_KEY = 'spur_workspaces-admin-key-0123456789';

const echo = {
  nodes: [
    { id: 'input_node', title: 'input_node', node_type: 'InputNode', config: { output_schema: { q: 'string' } } },
    { id: 'out', title: 'Answer', node_type: 'OutputNode', config: { output_map: { a: 'input_node.q' } } },
  ],
  links: [{ source_id: 'input_node', target_id: 'out' }],
};

type Http = ReturnType<typeof client>;

describe('e2e: workspaces keep teams apart', function () {
  this.timeout(120_000);
  let engine: Engine;
  let admin: Http;
  let team: Http;
  let teamWorkspace: string;
  let teamKey: string;

  before(async () => {
    engine = await startEngine({ SPUR_API_KEY_HASHES: hashApiKey(ADMIN_KEY), SPUR_FAIR_SHARE: 'true' });
    admin = client(engine.api.baseUrl, bearer(ADMIN_KEY));
    const made = await admin.post('/access/workspaces/', { name: 'team-b' });
    assert.equal(made.status, 201, made.text);
    teamWorkspace = made.body.id;
    const { key } = await memberWithKey(admin, teamWorkspace, 'bob', 'builder');
    assert.equal(key.workspace_id, teamWorkspace);
    teamKey = key.key;
    team = client(engine.api.baseUrl, bearer(key.key));
  });
  after(() => engine?.close());

  it('lists `default` and the new workspace; a second of the same name is 409', async () => {
    assert.match(teamWorkspace, /^WS\d+$/);
    const listed = (await admin.get('/access/workspaces/')).body as Array<{ id: string; name: string }>;
    assert.deepEqual(
      listed.map((w) => [w.id, w.name]),
      [
        ['default', 'default'],
        [teamWorkspace, 'team-b'],
      ],
    );
    assert.equal((await admin.post('/access/workspaces/', { name: 'team-b' })).status, 409);
  });

  it("another workspace's workflow and run do not exist: 404 by id, absent from listings, and the same name is free", async () => {
    const mine = await admin.post('/wf/', { name: 'Shared name', definition: echo });
    assert.equal(mine.status, 200, mine.text);
    const theirs = await team.post('/wf/', { name: 'Shared name', definition: echo });
    assert.equal(theirs.status, 200, `a name is unique within a workspace only: ${theirs.text}`);

    for (const [who, other] of [
      [team, mine.body.id],
      [admin, theirs.body.id],
    ] as const) {
      assert.equal((await who.get(`/wf/${other}/`)).status, 404);
      assert.equal((await who.put(`/wf/${other}/`, { name: 'taken over', definition: echo })).status, 404);
      assert.equal((await who.post(`/wf/${other}/run/?run_type=blocking`, { initial_inputs: {} })).status, 404);
      const listed = (await who.get('/wf/?page_size=100')).body as Array<{ id: string }>;
      assert.ok(!listed.some((w) => w.id === other), 'not listed');
    }
    assert.equal((await admin.get(`/wf/${mine.body.id}/`)).body.name, 'Shared name', 'nothing changed');

    const ran = await team.post(`/wf/${theirs.body.id}/run/?run_type=blocking`, {
      initial_inputs: { input_node: { q: 'hello' } },
    });
    assert.equal(ran.status, 200, ran.text);
    const runs = (await team.get(`/wf/${theirs.body.id}/runs/`)).body as Array<{ id: string; status: string }>;
    assert.equal(runs.length, 1);
    assert.equal(runs[0]!.status, 'COMPLETED');
    assert.equal((await admin.get(`/run/${runs[0]!.id}/`)).status, 404);
    assert.equal((await team.get(`/run/${runs[0]!.id}/`)).status, 200);

    // Operators filter by workspace in the Temporal Web UI.
    const prefix = engine.api.env.SPUR_WORKFLOW_ID_PREFIX as string;
    const inTeam = await engine.api.temporal.workflow.count(
      `SpurWorkspace = '${teamWorkspace}' AND WorkflowId STARTS_WITH '${prefix}'`,
    );
    assert.equal(inTeam.count, 1, 'the run carries SpurWorkspace');
  });

  it("a run someone waits on goes to Temporal's matching ahead of a batch, each under its workspace's fairness key", async () => {
    const wf = await team.post('/wf/', { name: 'Shares', definition: echo });
    assert.equal(wf.status, 200, wf.text);
    const ran = await team.post(`/wf/${wf.body.id}/start_run/`, { initial_inputs: { input_node: { q: 'now' } } });
    assert.equal(ran.status, 200, ran.text);
    assert.equal((await waitForRun(team, ran.body.id)).status, 'COMPLETED');
    const dataset = await uploadRows(team, 'share rows', [{ q: 'one' }, { q: 'two' }]);
    const batch = await team.post(`/wf/${wf.body.id}/start_batch_run/`, { dataset_id: dataset, mini_batch_size: 2 });
    assert.equal(batch.status, 200, batch.text);
    assert.equal((await waitForRun(team, batch.body.id)).status, 'COMPLETED');
    const mine = await admin.post('/wf/', { name: 'Shares of default', definition: echo });
    const ranInDefault = await admin.post(`/wf/${mine.body.id}/start_run/`, {
      initial_inputs: { input_node: { q: 'a' } },
    });
    assert.equal(ranInDefault.status, 200, ranInDefault.text);

    // What Temporal holds for each workflow: the oracle is the server's own description.
    const prefix = engine.api.env.SPUR_WORKFLOW_ID_PREFIX as string;
    const priorityOf = async (runId: string) => {
      const { priority } = await engine.api.temporal.workflow.getHandle(runWorkflowId(runId, prefix)).describe();
      return { priorityKey: priority?.priorityKey, fairnessKey: priority?.fairnessKey };
    };
    assert.deepEqual(await priorityOf(ran.body.id), { priorityKey: 2, fairnessKey: teamWorkspace });
    assert.deepEqual(await priorityOf(batch.body.id), { priorityKey: 4, fairnessKey: teamWorkspace });
    assert.deepEqual(await priorityOf(ranInDefault.body.id), { priorityKey: 2, fairnessKey: 'default' });
  });

  it("a browser signed in with a workspace's key acts in that workspace, not in default", async () => {
    const origin = engine.api.baseUrl.replace(/\/api$/, '');
    const mine = await admin.post('/wf/', { name: 'Default only', definition: echo });
    const cookie = sessionCookieOf(await postLogin(origin, teamKey));
    assert.match(cookie, /^spur_session=./);
    const asBrowser = (path: string) => plainRequest(origin, 'GET', `/api${path}`, { headers: { cookie, origin } });
    const me = await asBrowser('/access/me/');
    assert.equal(me.status, 200, me.body);
    assert.equal(JSON.parse(me.body).workspace_id, teamWorkspace);
    assert.equal((await asBrowser(`/wf/${mine.body.id}/`)).status, 404);
    const listed = JSON.parse((await asBrowser('/wf/?page_size=100')).body) as Array<{ id: string }>;
    assert.ok(!listed.some((w) => w.id === mine.body.id));
  });

  it("a webhook's delivery starts its run in the trigger's workspace, as it would any", async () => {
    const wf = (await team.post('/wf/', { name: 'Hooked', definition: echo })).body.id as string;
    const trigger = await team.post(`/wf/${wf}/triggers/`, { name: 'hook', respond: 'result' });
    assert.equal(trigger.status, 200, trigger.text);
    const delivered = await plainRequest(new URL(engine.api.baseUrl).origin, 'POST', trigger.body.url, {
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ q: 'from outside' }),
    });
    assert.equal(delivered.status, 200, delivered.body);
    const runs = (await team.get(`/wf/${wf}/runs/`)).body as Array<{ id: string; status: string }>;
    assert.deepEqual(
      runs.map((r) => r.status),
      ['COMPLETED'],
    );
    assert.equal((await admin.get(`/run/${runs[0]!.id}/`)).status, 404, 'not in default');
    assert.equal((await admin.get(`/triggers/${trigger.body.id}/`)).status, 404);
  });

  it("credentials are the workspace's own: setting, reading and deleting one never touches another workspace's", async () => {
    // An admin of the team's workspace only: credentials are a workspace admin's to manage.
    const carol = await memberWithKey(admin, teamWorkspace, 'carol-admin', 'admin');
    const teamAdmin = client(engine.api.baseUrl, bearer(carol.key.key));
    const shown = async (who: Http) => (await who.get('/env-mgmt/ANTHROPIC_API_KEY')).body.value as string;
    assert.equal(
      (await admin.post('/env-mgmt/', { name: 'ANTHROPIC_API_KEY', value: 'sk-ant-default-0001' })).status,
      200,
    );
    assert.equal(await shown(teamAdmin), '', "default's key is not the team's");
    assert.equal(
      (await teamAdmin.post('/env-mgmt/', { name: 'ANTHROPIC_API_KEY', value: 'sk-ant-team-0002' })).status,
      200,
    );
    assert.match(await shown(teamAdmin), /0002$/);
    assert.match(await shown(admin), /0001$/, "the team's write left default's key as it was");
    assert.equal((await teamAdmin.delete('/env-mgmt/ANTHROPIC_API_KEY')).status, 200);
    assert.equal((await teamAdmin.delete('/env-mgmt/ANTHROPIC_API_KEY')).status, 404);
    assert.match(await shown(admin), /0001$/, "the team's delete left default's key");
    const stored = await engine.api.mongo
      .db!.collection('env_vars')
      .find({}, { projection: { workspace_id: 1 } })
      .toArray();
    assert.deepEqual(
      stored.map((d) => [d._id, d.workspace_id]),
      [['ANTHROPIC_API_KEY', 'default']],
    );
  });

  it("a workspace's admin manages its members there and nothing of the installation: a removed member's key stops at once", async () => {
    const lead = await memberWithKey(admin, teamWorkspace, 'team-lead', 'admin');
    const asLead = client(engine.api.baseUrl, bearer(lead.key.key));
    const dave = await makeUser(admin, { username: 'dave', role: null });
    const added = await asLead.put(`/access/workspaces/${teamWorkspace}/members/${dave.id}`, { role: 'viewer' });
    assert.equal(added.status, 200, added.text);
    assert.deepEqual(added.body, { user_id: dave.id, username: 'dave', role: 'viewer' });
    const listed = (await asLead.get(`/access/workspaces/${teamWorkspace}/members/`)).body as Array<{
      username: string;
      role: string;
    }>;
    assert.deepEqual(
      listed.map((m) => `${m.username} ${m.role}`),
      // bob and carol-admin joined in the tests before, in this order.
      ['bob builder', 'carol-admin admin', 'team-lead admin', 'dave viewer'],
    );
    const daveKey = await makeKey(admin, { name: 'dave', user_id: dave.id, workspace_id: teamWorkspace });
    const asDave = client(engine.api.baseUrl, bearer(daveKey.key));
    assert.equal((await asDave.get('/wf/')).status, 200);
    assert.equal((await asDave.post('/wf/', { name: 'by a viewer', definition: echo })).status, 403);
    // Raised to builder: the key, made as a viewer's, stays a viewer's (a key never outgrows its making).
    assert.equal(
      (await asLead.put(`/access/workspaces/${teamWorkspace}/members/${dave.id}`, { role: 'builder' })).status,
      200,
    );
    assert.equal((await asDave.get('/access/me/')).body.role, 'viewer');

    // Nothing of the installation, nor of another workspace.
    assert.equal((await asLead.get('/access/users/')).status, 403);
    assert.equal((await asLead.post('/access/workspaces/', { name: 'more' })).status, 403);
    assert.equal((await asLead.get('/access/workspaces/default/members/')).status, 404);
    assert.equal((await asLead.put(`/access/workspaces/default/members/${dave.id}`, { role: 'admin' })).status, 404);
    assert.equal((await admin.get(`/access/users/${dave.id}/`)).body.role, null, 'dave is still no member of default');
    assert.deepEqual(
      ((await asLead.get('/access/workspaces/')).body as Array<{ id: string }>).map((w) => w.id),
      [teamWorkspace],
      'a member lists only the workspaces they belong to',
    );
    assert.equal((await asLead.get('/access/workspaces/default/')).status, 404);

    const removed = await asLead.delete(`/access/workspaces/${teamWorkspace}/members/${dave.id}`);
    assert.equal(removed.status, 204, removed.text);
    assert.equal((await asDave.get('/wf/')).status, 401, "the removed member's key was revoked");
    assert.equal((await asLead.delete(`/access/workspaces/${teamWorkspace}/members/${dave.id}`)).status, 404);
  });

  it('a signed-in user switches their session between their workspaces, and only to theirs', async () => {
    const origin = engine.api.baseUrl.replace(/\/api$/, '');
    const password = 'erin-password-0123';
    const erin = await makeUser(admin, { username: 'erin', role: 'viewer', password });
    assert.equal(
      (await admin.put(`/access/workspaces/${teamWorkspace}/members/${erin.id}`, { role: 'builder' })).status,
      200,
    );
    const login = await plainRequest(origin, 'POST', '/login', {
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin },
      body: new URLSearchParams({ username: 'erin', password, next: '/' }).toString(),
    });
    const cookie = sessionCookieOf(login);
    assert.match(cookie, /^spur_session=./, login.body);
    const asErin = (method: string, path: string, body?: object) =>
      plainRequest(origin, method, `/api${path}`, {
        headers: { cookie, origin, 'content-type': 'application/json' },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
    const me = JSON.parse((await asErin('GET', '/access/me/')).body);
    assert.equal(me.workspace_id, 'default');
    assert.deepEqual(me.workspaces, [
      { id: 'default', name: 'default', role: 'viewer' },
      { id: teamWorkspace, name: 'team-b', role: 'builder' },
    ]);
    const teamOnly = (await team.post('/wf/', { name: 'Team only', definition: echo })).body.id as string;
    assert.equal((await asErin('GET', `/wf/${teamOnly}/`)).status, 404, 'not in default');

    const switched = await asErin('PUT', '/access/me/', { workspace_id: teamWorkspace });
    assert.equal(switched.status, 200, switched.body);
    assert.equal(JSON.parse(switched.body).role, 'builder');
    assert.equal((await asErin('GET', `/wf/${teamOnly}/`)).status, 200, 'the session acts in team-b now');

    const stranger = (await admin.post('/access/workspaces/', { name: 'not erins' })).body.id as string;
    assert.equal((await asErin('PUT', '/access/me/', { workspace_id: stranger })).status, 404);
    assert.equal(JSON.parse((await asErin('GET', '/access/me/')).body).workspace_id, teamWorkspace, 'still in team-b');
    // A key acts in its own workspace: only a session switches.
    assert.equal((await team.put('/access/me/', { workspace_id: 'default' })).status, 409);
  });

  it('deleting a workspace that holds anything is 409 naming it; an empty one goes', async () => {
    const refused = await admin.delete(`/access/workspaces/${teamWorkspace}/`);
    assert.equal(refused.status, 409);
    assert.match(refused.body.detail, /workflows/);
    assert.equal((await admin.get(`/access/workspaces/${teamWorkspace}/`)).status, 200, 'still there');

    const empty = (await admin.post('/access/workspaces/', { name: 'empty' })).body.id as string;
    const removed = await admin.delete(`/access/workspaces/${empty}/`);
    assert.equal(removed.status, 204, removed.text);
    assert.equal((await admin.get(`/access/workspaces/${empty}/`)).status, 404);
    assert.equal((await admin.delete('/access/workspaces/default/')).status, 409);
  });

  it('only an admin makes a key for another workspace, or a workspace: 403 and nothing made', async () => {
    const keysBefore = await engine.api.mongo.db!.collection('access_keys').countDocuments();
    const refused = await team.post('/access/keys/', { name: 'into default', workspace_id: 'default' });
    assert.equal(refused.status, 403, refused.text);
    assert.equal(await engine.api.mongo.db!.collection('access_keys').countDocuments(), keysBefore);
    assert.equal((await team.post('/access/workspaces/', { name: 'mine' })).status, 403);
    const bob = (await admin.get('/access/users/')).body.find((u: { username: string }) => u.username === 'bob');
    const nowhere = await admin.post('/access/keys/', { name: 'nowhere', user_id: bob.id, workspace_id: 'WS999999' });
    assert.equal(nowhere.status, 404, nowhere.text);
    const notMember = await admin.post('/access/keys/', {
      name: 'into default',
      user_id: bob.id,
      workspace_id: 'default',
    });
    assert.equal(notMember.status, 409, 'bob is no member of default: a key there would act as no one');
  });
});

describe('e2e: SPUR_FAIR_SHARE left unset, as it is by default', function () {
  this.timeout(60_000);
  let api: TestApi;
  before(async () => {
    api = await startApi({ SPUR_API_KEY_HASHES: hashApiKey(ADMIN_KEY) });
  });
  after(() => api?.close());

  it("starts runs and batches, in default and in another workspace, with no priority or fairness key in Temporal's matching", async () => {
    assert.equal(api.env.SPUR_FAIR_SHARE, undefined, 'the setting is left to its default');
    const admin = client(api.baseUrl, bearer(ADMIN_KEY));
    const other = (await admin.post('/access/workspaces/', { name: 'team-b' })).body.id as string;
    const { key } = await memberWithKey(admin, other, 'bob', 'builder');
    const team = client(api.baseUrl, bearer(key.key));
    const started: string[] = [];
    for (const who of [admin, team]) {
      const wf = await who.post('/wf/', { name: 'Shares', definition: echo });
      assert.equal(wf.status, 200, wf.text);
      const ran = await who.post(`/wf/${wf.body.id}/start_run/`, { initial_inputs: { input_node: { q: 'now' } } });
      assert.equal(ran.status, 200, ran.text);
      const dataset = await uploadRows(who, 'share rows', [{ q: 'one' }]);
      const batch = await who.post(`/wf/${wf.body.id}/start_batch_run/`, { dataset_id: dataset });
      assert.equal(batch.status, 200, batch.text);
      started.push(ran.body.id, batch.body.id);
    }

    // No worker here: each workflow waits on its task queue, as Temporal was asked to start it.
    const prefix = api.env.SPUR_WORKFLOW_ID_PREFIX as string;
    for (const runId of started) {
      const { priority } = await api.temporal.workflow.getHandle(runWorkflowId(runId, prefix)).describe();
      assert.deepEqual(
        { priorityKey: priority?.priorityKey, fairnessKey: priority?.fairnessKey },
        { priorityKey: undefined, fairnessKey: undefined },
        runId,
      );
    }
  });
});

describe('e2e: an installation from before workspaces moves into `default`', function () {
  this.timeout(60_000);
  const apis: TestApi[] = [];
  const started = async (env: Record<string, string>) => {
    const api = await startApi(env);
    apis.push(api);
    return api;
  };
  after(() => Promise.all(apis.map((api) => api.close())));

  it('keeps every id and answer, and frees names for other workspaces', async () => {
    const dbName = `spur_test_premigration_${randomBytes(4).toString('hex')}`;
    const mongo = await MongoClient.connect(stack.mongoUri);
    try {
      const now = new Date();
      const db = mongo.db(dbName);
      // As a Spur of before workspaces wrote them: no workspace_id, names unique installation-wide.
      await db.collection('workflows').createIndex({ name: 1 }, { unique: true });
      await db.collection('workflows').insertOne({
        _id: 'S7' as unknown as never,
        seq: 7,
        name: 'Old',
        description: null,
        definition: JSON.stringify(echo),
        created_at: now,
        updated_at: now,
      });
    } finally {
      await mongo.close();
    }
    const api = await started({ SPUR_MONGODB_DB: dbName, SPUR_API_KEY_HASHES: hashApiKey(ADMIN_KEY) });
    const admin = client(api.baseUrl, bearer(ADMIN_KEY));
    const old = await admin.get('/wf/S7/');
    assert.equal(old.status, 200, old.text);
    assert.equal(old.body.name, 'Old');
    const stored = await api.mongo.db!.collection('workflows').findOne({ _id: 'S7' as unknown as never });
    assert.equal(stored?.workspace_id, 'default');

    const other = (await admin.post('/access/workspaces/', { name: 'other' })).body.id as string;
    const { key } = await memberWithKey(admin, other, 'carol', 'builder');
    const carol = client(api.baseUrl, bearer(key.key));
    const theirs = await carol.post('/wf/', { name: 'Old', definition: echo });
    assert.equal(theirs.status, 200, theirs.text);
    assert.equal(theirs.body.name, 'Old', 'the installation-wide unique index is gone');
    // Within `default` the name is still taken: PySpur's answer to a duplicate is a numbered name.
    const again = await admin.post('/wf/', { name: 'Old', definition: echo });
    assert.equal(again.status, 200, again.text);
    assert.notEqual(again.body.name, 'Old');
  });

  it("an installation placed in workspaces before its credentials were a workspace's keeps them in `default`", async () => {
    const dbName = `spur_test_credentials_${randomBytes(4).toString('hex')}`;
    const env = {
      SPUR_MONGODB_DB: dbName,
      SPUR_API_KEY_HASHES: hashApiKey(ADMIN_KEY),
      SPUR_SECRET_KEY: randomBytes(32).toString('base64'),
    };
    const first = await started(env);
    let admin = client(first.baseUrl, bearer(ADMIN_KEY));
    assert.equal(
      (await admin.post('/env-mgmt/', { name: 'ANTHROPIC_API_KEY', value: 'sk-ant-kept-0003' })).status,
      200,
    );
    // As the version before wrote it: `default` exists, the credential has no workspace.
    await first.mongo.db!.collection('env_vars').updateMany({}, { $unset: { workspace_id: '' } });
    // A second process starts on that database (the first one's close would drop it).
    const api = await started(env);
    admin = client(api.baseUrl, bearer(ADMIN_KEY));
    assert.match((await admin.get('/env-mgmt/ANTHROPIC_API_KEY')).body.value, /0003$/);
    const stored = await api.mongo.db!.collection('env_vars').findOne({ _id: 'ANTHROPIC_API_KEY' as unknown as never });
    assert.equal(stored?.workspace_id, 'default');
  });
});

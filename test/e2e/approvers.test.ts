// Who may decide a pause (a HumanInterventionNode's `approvers`), by every way a decision comes in
// (the API with a user's key, the web UI's inbox with a signed-in session, an operator's key naming
// the decider, an approval link, and a queued signal when no worker runs), and who the history says
// decided: docs/approvals.md, "Who may decide".
import assert from 'node:assert/strict';
import { hashApiKey } from '../../src/http/api-keys';
import { startApi, type TestApi } from '../support/api';
import { type Engine, isFinal, startEngine, waitForRun } from '../support/engine';
import { type FakeServices, startFakeServices } from '../support/fake-services';
import { bearer, makeKey, memberWithKey } from '../support/access';
import { until } from '../support/exec-log';
import { client } from '../support/http';
import {
  PUBLIC_URL,
  connectMessaging,
  decideByLink,
  gated,
  linksFor,
  onApi,
  openLink,
  pressButton,
} from '../support/approvals';
import { startWorker, type TestWorker } from '../support/worker';

const ADMIN_KEY = 'spur_approvers-admin-key-0123456789';
const PASSWORD = 'a long enough password';

type Http = ReturnType<typeof client>;

const slack = (to: string, extra: Record<string, unknown> = {}) => ({ channel: 'slack', to, ...extra });

interface TestUser {
  id: string;
  username: string;
  /** The API with the user's own key. */
  http: Http;
}

/** A user of `role` (with a password) and a key of theirs, made with the configured admin key. */
async function newUser(admin: Http, base: string, username: string, role: string): Promise<TestUser> {
  const user = await admin.post('/access/users/', { username, role, password: PASSWORD });
  assert.equal(user.status, 201, user.text);
  const key = await admin.post('/access/keys/', { name: `${username}'s key`, user_id: user.body.id });
  assert.equal(key.status, 201, key.text);
  return { id: user.body.id, username, http: client(base, { authorization: `Bearer ${key.body.key}` }) };
}

/** A browser session of the user, signed in on the login page: the API as PySpur's web UI calls it (cookie and Origin). */
async function signIn(base: string, username: string): Promise<Http> {
  const origin = new URL(base).origin;
  const res = await fetch(`${origin}/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin },
    body: new URLSearchParams({ username, password: PASSWORD, next: '/dashboard' }).toString(),
  });
  assert.equal(res.status, 303, await res.text());
  const cookie = (res.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
  assert.match(cookie, /^spur_session=/);
  return client(base, { cookie, origin });
}

/** What the web UI's inbox sends with every decision (PySpur's dashboard: a fixed placeholder). */
const fromInbox = (action = 'APPROVE') => ({ inputs: {}, user_id: 'current-user', action, comments: null });

describe('e2e: who may decide a pause (approvers) and who the history says decided', function () {
  this.timeout(240_000);
  let engine: Engine;
  let admin: Http;
  let fake: FakeServices;
  let ada: TestUser; // approver, named by id
  let bob: TestUser; // approver, named by nobody
  let cy: TestUser; // builder
  let dee: TestUser; // admin

  before(async () => {
    engine = await startEngine({
      SPUR_API_KEY_HASHES: hashApiKey(ADMIN_KEY),
      SPUR_PUBLIC_URL: PUBLIC_URL,
      SPUR_LOG_LEVEL: 'error',
    });
    const base = engine.api.baseUrl;
    admin = client(base, { authorization: `Bearer ${ADMIN_KEY}` });
    fake = await startFakeServices();
    await connectMessaging({ ...engine, http: admin }, fake);
    ada = await newUser(admin, base, 'ada', 'approver');
    bob = await newUser(admin, base, 'bob', 'approver');
    cy = await newUser(admin, base, 'cy', 'builder');
    dee = await newUser(admin, base, 'dee', 'admin');
  });
  after(async () => {
    await engine?.close();
    await fake?.close();
  });

  async function pausedRun(config: Record<string, unknown>): Promise<string> {
    const wf = await admin.post('/wf/', { name: `approvers-${Math.random()}`, definition: gated(config) });
    assert.equal(wf.status, 200, wf.text);
    const res = await admin.post(`/wf/${wf.body.id}/start_run/`, { initial_inputs: { in: { x: 'v' } } });
    assert.equal(res.status, 200, res.text);
    await waitForRun(admin, res.body.id, (r) => r.status === 'PAUSED');
    return res.body.id as string;
  }
  const decide = (http: Http, runId: string, userId: string, action = 'APPROVE') =>
    http.post(`/wf/process_pause_action/${runId}/`, { inputs: {}, user_id: userId, action });
  const historyOf = async (runId: string) => (await admin.get(`/wf/pause_history/${runId}/`)).body as any[];

  /** Nothing was decided: the run is still PAUSED, its pause open with no decision recorded. */
  async function assertStillOpen(runId: string): Promise<void> {
    assert.equal((await admin.get(`/run/${runId}/status/`)).body.status, 'PAUSED');
    const [pause] = await historyOf(runId);
    assert.equal(pause.resume_time, null);
    assert.equal(pause.resume_user_id, null);
    assert.deepEqual(pause.decisions, []);
  }

  /** The run completed, and its one pause was decided by `userId` (`username`) through `channel`. */
  async function assertDecidedBy(runId: string, userId: string, username: string | null, channel: string) {
    assert.equal((await waitForRun(admin, runId, isFinal)).status, 'COMPLETED');
    const [pause] = await historyOf(runId);
    assert.equal(pause.resume_user_id, userId);
    assert.equal(pause.resume_action, 'APPROVE');
    assert.equal(pause.decisions.length, 1);
    const [decision] = pause.decisions;
    assert.deepEqual(
      { user_id: decision.user_id, username: decision.username, channel: decision.channel, action: decision.action },
      { user_id: userId, username, channel, action: 'APPROVE' },
    );
    const t = Date.parse(decision.time);
    assert.ok(t >= Date.parse(pause.pause_time) && t <= Date.now(), `${decision.time} is the decision's time`);
  }

  it('refuses a malformed or unusable approvers config when the workflow is saved (422 naming the field)', async () => {
    const cases: [Record<string, unknown>, (string | number)[], RegExp][] = [
      [{ approvers: { roles: ['boss'] } }, ['approvers', 'roles', 0], /viewer|approver/],
      [{ approvers: { users: ['ada'] } }, ['approvers', 'users', 0], /a user id \(UA…\)/],
      [{ approvers: {} }, ['approvers'], /names no user and no role/],
      [{ approvers: { user: [ada.id] } }, ['approvers'], /Unrecognized key: "user"/],
      [{ approvers: [ada.id] }, ['approvers'], /object/],
      [{ approvers: { users: [ada.id] }, notify: [slack('C-x')] }, ['notify', 0, 'user_id'], /needs the `user_id`/],
      [
        { approvers: { users: [ada.id] }, notify: [slack('C-x', { user_id: bob.id })] },
        ['notify', 0, 'user_id'],
        /not among `approvers.users`/,
      ],
      [
        { approvers: { roles: ['builder'] }, notify: [slack('C-x', { user_id: 'ops-bot' })] },
        ['notify', 0, 'user_id'],
        /no user id/,
      ],
      [{ approvers: { users: [ada.id] }, approvals_required: 2 }, ['approvals_required'], /2 approvals required of 1/],
    ];
    for (const [config, field, message] of cases) {
      const res = await admin.post('/wf/', { name: `bad-${Math.random()}`, definition: gated(config) });
      assert.equal(res.status, 422, JSON.stringify(config));
      const detail = (res.body.detail as { loc: unknown[]; msg: string }[]).find(
        (d) => JSON.stringify(d.loc.slice(-field.length)) === JSON.stringify(field) && d.loc.includes('config'),
      );
      assert.ok(detail, `${JSON.stringify(field)} named: ${JSON.stringify(res.body.detail)}`);
      assert.match(detail.msg, message);
    }
    const saved = (await admin.get('/wf/?page_size=100')).body as { name: string }[];
    assert.deepEqual(
      saved.filter((w) => w.name.startsWith('bad-')),
      [],
      'no refused workflow was saved',
    );
    const good = await admin.post('/wf/', {
      name: `good-${Math.random()}`,
      definition: gated({ approvers: { users: [ada.id], roles: ['builder'] } }),
    });
    assert.equal(good.status, 200, good.text);
  });

  it('only the named user decides by API: another approver and an admin get 403 and the pause stays open; the named one decides as themself', async () => {
    const runId = await pausedRun({ approvers: { users: [ada.id] } });
    for (const other of [bob, dee]) {
      const res = await decide(other.http, runId, 'current-user');
      assert.equal(res.status, 403, `${other.username}: ${res.text}`);
      assert.match(res.body.detail, new RegExp(`${other.id} is not among the approvers of node 'gate'`));
      await assertStillOpen(runId);
    }
    const res = await decide(ada.http, runId, 'current-user');
    assert.equal(res.status, 200, res.text);
    await assertDecidedBy(runId, ada.id, 'ada', 'api');
  });

  it("roles match exactly and are the user's own, read at the decision: an approver and an admin do not decide a builders' pause; a user promoted to builder since it opened does; a builder's key capped to approver decides as the builder", async () => {
    const runId = await pausedRun({ approvers: { roles: ['builder'] } });
    const fay = await newUser(admin, engine.api.baseUrl, 'fay', 'approver');
    for (const other of [bob, dee, fay]) {
      assert.equal((await decide(other.http, runId, other.username)).status, 403, other.username);
      await assertStillOpen(runId);
    }
    assert.equal((await admin.put(`/access/users/${fay.id}/`, { role: 'builder' })).status, 200);
    // A user may name themself by username too.
    const res = await decide(fay.http, runId, 'fay');
    assert.equal(res.status, 200, res.text);
    await assertDecidedBy(runId, fay.id, 'fay', 'api');

    const next = await pausedRun({ approvers: { roles: ['builder'] } });
    const capped = await admin.post('/access/keys/', { name: 'capped', user_id: cy.id, role: 'approver' });
    assert.equal(capped.status, 201, capped.text);
    const cysCappedKey = client(engine.api.baseUrl, { authorization: `Bearer ${capped.body.key}` });
    assert.equal((await cysCappedKey.get('/access/me/')).body.role, 'approver');
    assert.equal((await decide(cysCappedKey, next, 'current-user')).status, 200);
    await assertDecidedBy(next, cy.id, 'cy', 'api');
  });

  it("roles are the user's in the run's workspace: a builder of default who is an approver there does not decide its builders' pause (API, link or bulk action); a builder who belongs to it alone does", async () => {
    const base = engine.api.baseUrl;
    const ws = await admin.post('/access/workspaces/', { name: `approvers-${Math.random()}` });
    assert.equal(ws.status, 201, ws.text);
    const wsId = ws.body.id as string;
    const { user: gus, key: gusKey } = await memberWithKey(admin, wsId, `gus-${wsId}`, 'builder');
    const gusHttp = client(base, bearer(gusKey.key));
    // Credentials are a workspace's own: its admin connects Slack there.
    const { key: wsAdminKey } = await memberWithKey(admin, wsId, `wsadmin-${wsId}`, 'admin');
    await connectMessaging({ ...engine, http: client(base, bearer(wsAdminKey.key)) }, fake);
    // cy, a builder of default, is an approver in the workspace, notified there by Slack.
    const joined = await admin.put(`/access/workspaces/${wsId}/members/${cy.id}`, { role: 'approver' });
    assert.equal(joined.status, 200, joined.text);
    const cyHere = await makeKey(admin, { name: 'cy here', user_id: cy.id, workspace_id: wsId });
    const cyHttp = client(base, bearer(cyHere.key));
    const pausedThere = async () => {
      const wf = await gusHttp.post('/wf/', {
        name: `ws-approvers-${Math.random()}`,
        definition: gated({ approvers: { roles: ['builder'] }, notify: [slack('C-ws', { user_id: cy.id })] }),
      });
      assert.equal(wf.status, 200, wf.text);
      const started = await gusHttp.post(`/wf/${wf.body.id}/start_run/`, { initial_inputs: { in: { x: 'v' } } });
      assert.equal(started.status, 200, started.text);
      await waitForRun(gusHttp, started.body.id, (r) => r.status === 'PAUSED');
      return { runId: started.body.id as string, workflowId: wf.body.id as string };
    };
    const stillOpenThere = async (runId: string) => {
      assert.equal((await gusHttp.get(`/run/${runId}/status/`)).body.status, 'PAUSED');
      const [pause] = (await gusHttp.get(`/wf/pause_history/${runId}/`)).body as any[];
      assert.deepEqual([pause.resume_time, pause.decisions], [null, []]);
    };

    const { runId, workflowId } = await pausedThere();
    const byApi = await decide(cyHttp, runId, 'current-user');
    assert.equal(byApi.status, 403, byApi.text);
    await stillOpenThere(runId);
    const [cys] = await linksFor(fake, 'C-ws');
    const url = onApi(engine, cys!.link);
    const page = await openLink(url);
    assert.equal(page.status, 403, page.html);
    assert.match(page.html, /You may not decide this pause/);
    const nonce = 'n'.repeat(43);
    const posted = await pressButton(url, { cookie: `spur_approval_nonce=${nonce}`, nonce }, 'APPROVE');
    assert.equal(posted.status, 403, posted.html);
    await stillOpenThere(runId);
    const bulk = await cyHttp.post('/runs/actions/', { filter: { workflow_id: workflowId }, action: 'approve' });
    assert.equal(bulk.status, 200, bulk.text);
    const bulkResult = async () => (await cyHttp.get(`/runs/actions/${bulk.body.id}/`)).body;
    await until('the bulk approval to end', async () => (await bulkResult()).status !== 'RUNNING');
    const [result] = (await bulkResult()).results as Array<{ outcome: string; error: string | null }>;
    assert.equal(result?.outcome, 'failed', JSON.stringify(result));
    assert.match(result?.error ?? '', /is not among the approvers of node 'gate'/);
    await stillOpenThere(runId);

    const byMember = await decide(gusHttp, runId, 'current-user');
    assert.equal(byMember.status, 200, byMember.text);
    assert.equal((await waitForRun(gusHttp, runId, isFinal)).status, 'COMPLETED');
    const [pause] = (await gusHttp.get(`/wf/pause_history/${runId}/`)).body as any[];
    assert.equal(pause.resume_user_id, gus.id);
  });

  it('a signed-in user decides only as themself: a body user_id naming someone else is 403 and changes nothing', async () => {
    const runId = await pausedRun({});
    for (const named of [bob.id, 'bob', 'someone-else', 'system:timeout']) {
      const res = await decide(ada.http, runId, named);
      assert.equal(res.status, 403, `${named}: ${res.text}`);
      assert.match(res.body.detail, /decides as themself/);
      await assertStillOpen(runId);
    }
    const res = await decide(ada.http, runId, ada.id);
    assert.equal(res.status, 200, res.text);
    await assertDecidedBy(runId, ada.id, 'ada', 'api');
  });

  it("the inbox (a signed-in browser session sending the web UI's current-user): someone the approvers leave out is 403, a named user decides as themself", async () => {
    const runId = await pausedRun({ approvers: { users: [ada.id] } });
    const bobsBrowser = await signIn(engine.api.baseUrl, 'bob');
    // The inbox lists the run for anyone who may read runs; deciding is what approvers restrict.
    const inbox = await bobsBrowser.get('/wf/paused_workflows/');
    assert.equal(inbox.status, 200, inbox.text);
    assert.ok((inbox.body as { run: { id: string } }[]).some((item) => item.run.id === runId));
    const refused = await bobsBrowser.post(`/wf/process_pause_action/${runId}/`, fromInbox());
    assert.equal(refused.status, 403, refused.text);
    await assertStillOpen(runId);

    const adasBrowser = await signIn(engine.api.baseUrl, 'ada');
    const res = await adasBrowser.post(`/wf/process_pause_action/${runId}/`, fromInbox());
    assert.equal(res.status, 200, res.text);
    await assertDecidedBy(runId, ada.id, 'ada', 'api');
  });

  it('an operator key names the decider as PySpur clients do; approvers hold against the user it names, looked up with their role', async () => {
    const runId = await pausedRun({ approvers: { users: [ada.id], roles: ['builder'] } });
    for (const named of [bob.id, dee.id, 'ops-bot', 'cy']) {
      const res = await decide(admin, runId, named);
      assert.equal(res.status, 403, `${named}: ${res.text}`);
      await assertStillOpen(runId);
    }
    const res = await decide(admin, runId, cy.id);
    assert.equal(res.status, 200, res.text);
    await assertDecidedBy(runId, cy.id, 'cy', 'api');

    // Without approvers, an operator names anyone, as before (no username: not a user).
    const open = await pausedRun({});
    assert.equal((await decide(admin, open, 'ops-bot')).status, 200);
    await assertDecidedBy(open, 'ops-bot', null, 'api');
  });

  it('a disabled user decides nothing: not named by an operator, not by their link, even on a pause without approvers', async () => {
    const eve = await newUser(admin, engine.api.baseUrl, 'eve', 'approver');
    const runId = await pausedRun({ notify: [slack('C-eve', { user_id: eve.id })] });
    const [link] = await linksFor(fake, 'C-eve');
    assert.equal((await admin.put(`/access/users/${eve.id}/`, { disabled: true })).status, 200);
    const res = await decide(admin, runId, eve.id);
    assert.equal(res.status, 403, res.text);
    assert.match(res.body.detail, /disabled/);
    await assertStillOpen(runId);
    const page = await openLink(onApi(engine, link!.link));
    assert.equal(page.status, 403);
    assert.match(page.html, /disabled/);
    await assertStillOpen(runId);
    assert.equal((await decide(eve.http, runId, 'current-user')).status, 401, 'her key is revoked too');
    assert.equal((await decide(ada.http, runId, 'current-user')).status, 200);
    await assertDecidedBy(runId, ada.id, 'ada', 'api');
  });

  it("an approval link decides as its recipient: one the approvers leave out gets 403 on the page and the POST, the pause stays open; a named recipient's link decides through its channel", async () => {
    const runId = await pausedRun({
      approvers: { roles: ['builder'] },
      notify: [slack('C-bob', { user_id: bob.id }), slack('C-cy', { user_id: cy.id })],
    });
    const [bobs] = await linksFor(fake, 'C-bob');
    const [cys] = await linksFor(fake, 'C-cy');
    const url = onApi(engine, bobs!.link);
    const page = await openLink(url);
    assert.equal(page.status, 403);
    assert.match(page.html, /You may not decide this pause/);
    assert.equal(page.nonce, null, 'no form to post');
    // A POST as a browser would send it (a nonce in the cookie and the form) is refused the same way.
    const nonce = 'n'.repeat(43);
    const posted = await pressButton(url, { cookie: `spur_approval_nonce=${nonce}`, nonce }, 'APPROVE');
    assert.equal(posted.status, 403, posted.html);
    await assertStillOpen(runId);

    const decided = await decideByLink(engine, cys!.link, 'APPROVE');
    assert.equal(decided.status, 200, decided.html);
    await assertDecidedBy(runId, cy.id, 'cy', 'slack');
  });
});

describe('e2e: approvers when no worker runs (the decision queued as a signal)', function () {
  this.timeout(240_000);
  let api: TestApi | undefined;
  let worker: TestWorker | undefined;
  after(async () => {
    await worker?.stop();
    await api?.close();
  });

  it('refuses a decider the approvers leave out at once (403, nothing queued) and queues a named one (202), applied once a worker returns', async () => {
    api = await startApi({ SPUR_API_KEY_HASHES: hashApiKey(ADMIN_KEY), SPUR_PAUSE_ACTION_WAIT_SECONDS: '1' });
    worker = await startWorker(api.env);
    const admin = client(api.baseUrl, { authorization: `Bearer ${ADMIN_KEY}` });
    const ada = await newUser(admin, api.baseUrl, 'ada', 'approver');
    const bob = await newUser(admin, api.baseUrl, 'bob', 'approver');
    const wf = await admin.post('/wf/', { name: 'queued', definition: gated({ approvers: { users: [ada.id] } }) });
    const started = await admin.post(`/wf/${wf.body.id}/start_run/`, { initial_inputs: { in: { x: 'q' } } });
    const runId = started.body.id as string;
    await waitForRun(admin, runId, (r) => r.status === 'PAUSED');
    // A graceful stop: the worker hands back its sticky queue, so the next one gets the run's task.
    await worker.stop();
    worker = undefined;

    const refused = await bob.http.post(`/wf/process_pause_action/${runId}/`, fromInbox());
    assert.equal(refused.status, 403, refused.text);
    const queued = await ada.http.post(`/wf/process_pause_action/${runId}/`, fromInbox());
    assert.equal(queued.status, 202, queued.text);
    const [waiting] = (await admin.get(`/wf/pause_history/${runId}/`)).body;
    assert.equal(waiting.resume_time, null, 'nothing applied without a worker');

    worker = await startWorker(api.env);
    assert.equal((await waitForRun(admin, runId, isFinal, 90_000)).status, 'COMPLETED');
    const [pause] = (await admin.get(`/wf/pause_history/${runId}/`)).body;
    assert.equal(pause.resume_user_id, ada.id);
    assert.deepEqual(
      pause.decisions.map((d: any) => [d.user_id, d.username, d.channel]),
      [[ada.id, 'ada', 'api']],
      "bob's refused decision was never queued",
    );
  });
});

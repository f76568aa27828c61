import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import { hashApiKey } from '../../src/http/api-keys';
import { startApi, type TestApi } from '../support/api';
import { type AuditEntryView as Entry, auditEntryOf } from '../support/audit';
import { client } from '../support/http';
import { type Seeded, seed } from './attack-corpus';

const KEY = `spur_audit-secrets-${randomBytes(8).toString('hex')}`;
const WITH_KEY = { authorization: `Bearer ${KEY}` };
const secret = (what: string) => `${what}-${randomBytes(12).toString('hex')}`;

describe('security: the audit trail records who and what, never a secret; only admins read it', function () {
  this.timeout(180_000);
  let api: TestApi;
  let origin: string;
  let seeded: Seeded;
  const admin = () => client(api.baseUrl, WITH_KEY);
  /** Every string a request below carries that must never be in the trail. */
  const secrets: string[] = [KEY];
  const user = {
    id: '',
    username: `alice-${randomBytes(3).toString('hex')}`,
    password: secret('pw'),
    key: '',
    keyId: '',
  };

  const site = (path: string, init: RequestInit = {}) => fetch(`${origin}${path}`, { redirect: 'manual', ...init });
  const form = (fields: Record<string, string>, headers: Record<string, string> = {}) => ({
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin, ...headers },
    body: new URLSearchParams(fields).toString(),
  });
  /** The entry of the request `res` answered. */
  const entryOf = (res: { headers: Headers }) => auditEntryOf(admin(), res.headers.get('x-request-id') ?? '');
  const all = async () =>
    JSON.stringify(await api.mongo.db!.collection('audit_entries').find({}).sort({ seq: 1 }).toArray());

  before(async () => {
    api = await startApi({
      SPUR_API_KEY_HASHES: hashApiKey(KEY),
      SPUR_WEB_UI: 'false',
      // No worker takes the seeded run's pause: a link's decision goes as a signal after 1 s.
      SPUR_PAUSE_ACTION_WAIT_SECONDS: '1',
    });
    origin = api.baseUrl.replace(/\/api$/, '');
    seeded = await seed(api, WITH_KEY);
    secrets.push(seeded.hookToken, seeded.approvalToken, seeded.approvalNonce);
  });
  after(async () => {
    await api?.close();
  });

  it('records users and keys made, passwords and keys never', async () => {
    const made = await admin().post('/access/users/', {
      username: user.username,
      role: 'builder',
      password: user.password,
    });
    assert.equal(made.status, 201, made.text);
    user.id = made.body.id;
    const key = await admin().post('/access/keys/', { name: 'alice', user_id: user.id });
    assert.equal(key.status, 201, key.text);
    [user.key, user.keyId] = [key.body.key, key.body.id];
    secrets.push(user.password, user.key);
    const newPassword = secret('pw2');
    secrets.push(newPassword);
    const changed = await admin().request('PUT', `/access/users/${user.id}/`, { password: newPassword });
    assert.equal(changed.status, 200, changed.text);
    assert.deepEqual(
      [(await entryOf(made)).action, (await entryOf(made)).target],
      ['user.create', { type: 'user', id: user.id }],
    );
    assert.deepEqual(
      [(await entryOf(key)).action, (await entryOf(key)).target],
      ['key.create', { type: 'key', id: user.keyId }],
    );
    assert.deepEqual(
      [(await entryOf(changed)).action, (await entryOf(changed)).target],
      ['user.update', { type: 'user', id: user.id }],
    );
    await admin().request('PUT', `/access/users/${user.id}/`, { password: user.password });
  });

  it('records sign-ins by password and by key, failed ones and sign-outs, with who signed in', async () => {
    const wrong = secret('wrong-pw');
    // A password typed into the username field is a secret too.
    const typo = secret('typed-in-username');
    secrets.push(wrong, typo);
    const failed = await site('/login', form({ username: user.username, password: wrong }));
    assert.equal(failed.status, 401);
    const unknown = await site('/login', form({ username: typo, password: wrong }));
    assert.equal(unknown.status, 401);
    for (const res of [failed, unknown])
      assert.deepEqual(
        (({ action, target, outcome, actor }) => ({ action, target, outcome, actor }))(await entryOf(res)),
        { action: 'session.sign_in', target: { type: 'user', id: null }, outcome: 401, actor: { via: 'anonymous' } },
      );

    const signedIn = await site('/login', form({ username: user.username, password: user.password }));
    assert.equal(signedIn.status, 303);
    const entry = await entryOf(signedIn);
    assert.deepEqual(
      [entry.action, entry.target, entry.outcome, entry.actor],
      ['session.sign_in', { type: 'user', id: user.id }, 303, { user_id: user.id, via: 'session' }],
    );
    const cookie = (signedIn.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
    secrets.push(cookie.split('=')[1] ?? '');

    const byKey = await site('/login', form({ api_key: user.key }));
    assert.equal(byKey.status, 303);
    assert.deepEqual((await entryOf(byKey)).actor, { user_id: user.id, key_id: user.keyId, via: 'session' });
    const byConfigured = await site('/login', form({ api_key: KEY }));
    assert.equal(byConfigured.status, 303);
    const configured = await entryOf(byConfigured);
    assert.match(configured.target.id ?? '', /^config:[0-9a-f]{12}$/);
    assert.deepEqual(configured.actor, { key_id: configured.target.id, via: 'session' });

    const out = await site('/logout', form({}, { cookie }));
    assert.equal(out.status, 303);
    const signedOut = await entryOf(out);
    assert.deepEqual(
      [signedOut.action, signedOut.outcome, signedOut.actor],
      ['session.sign_out', 303, { user_id: user.id, via: 'session' }],
    );
  });

  it('records credentials set, webhooks delivered (by trigger, not token) and approval-link decisions (by pause and recipient)', async () => {
    const providerKey = secret('sk');
    const googleToken = secret('ya29');
    const hookSecret = secret('whsec');
    secrets.push(providerKey, googleToken, hookSecret);
    const set = await admin().post('/env-mgmt/', { name: 'ANTHROPIC_API_KEY', value: providerKey });
    assert.equal(set.status, 200, set.text);
    assert.deepEqual((await entryOf(set)).action, 'credential.set');
    const google = await admin().post('/google/store_token/', { access_token: googleToken, expires_in: 3600 });
    assert.equal(google.status, 200, google.text);

    const trigger = await admin().post(`/wf/${seeded.workflow}/triggers/`, {
      name: 'signed',
      signature: { header: 'X-Sig' },
      secret: hookSecret,
    });
    assert.equal(trigger.status, 200, trigger.text);
    const token = String(trigger.body.url).split('/hooks/')[1] as string;
    secrets.push(token);
    const body = JSON.stringify({ x: 'hello' });
    const signature = createHmac('sha256', hookSecret).update(body).digest('hex');
    secrets.push(signature);
    const delivered = await fetch(`${api.baseUrl}/hooks/${token}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-sig': signature },
      body,
    });
    assert.equal(delivered.status, 202, await delivered.text());
    assert.deepEqual((({ action, target, actor }) => ({ action, target, actor }))(await entryOf(delivered)), {
      action: 'hook.deliver',
      target: { type: 'trigger', id: trigger.body.id },
      actor: { via: 'webhook' },
    });
    const forged = await fetch(`${api.baseUrl}/hooks/${token}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-sig': 'f'.repeat(64) },
      body,
    });
    assert.equal(forged.status, 401);
    assert.equal((await entryOf(forged)).outcome, 401);
    const guessed = secret('guessed-token');
    secrets.push(guessed);
    const unknown = await fetch(`${api.baseUrl}/hooks/${guessed}`, { method: 'POST' });
    assert.equal(unknown.status, 404);
    assert.deepEqual((await entryOf(unknown)).target, { type: 'trigger', id: null });

    const decisionForm = { nonce: seeded.approvalNonce, action: 'APPROVE', comments: 'fine' };
    const decided = await site(
      `/approve/${seeded.approvalToken}`,
      form(decisionForm, { cookie: `spur_approval_nonce=${seeded.approvalNonce}` }),
    );
    assert.equal(decided.status, 200, await decided.text());
    assert.deepEqual(
      (({ action, target, outcome, actor }) => ({ action, target, outcome, actor }))(await entryOf(decided)),
      {
        action: 'pause.approve',
        target: { type: 'pause', id: seeded.pause },
        outcome: 200,
        actor: { user_id: 'email:reviewer@example.test', via: 'approval_link' },
      },
    );
    const badLink = secret('not-a-link');
    secrets.push(badLink);
    const refused = await site(
      `/approve/${badLink}`,
      form(decisionForm, { cookie: `spur_approval_nonce=${seeded.approvalNonce}` }),
    );
    assert.equal(refused.status, 403);
    assert.deepEqual((({ action, target }) => ({ action, target }))(await entryOf(refused)), {
      action: 'pause.decide',
      target: { type: 'pause', id: null },
    });
    const wrongKey = secret('spur_wrong');
    secrets.push(wrongKey);
    const denied = await fetch(`${api.baseUrl}/wf/`, {
      method: 'POST',
      headers: { authorization: `Bearer ${wrongKey}`, 'content-type': 'application/json' },
      body: '{}',
    });
    assert.equal(denied.status, 401);
  });

  it('holds none of the secrets above anywhere in the audit collection, nor in its export', async () => {
    const stored = await all();
    const exported = (await admin().get('/access/audit/export/')).text;
    assert.ok(stored.includes(user.id) && stored.includes('session.sign_in'), 'the scan reads the entries');
    for (const s of secrets.filter((x) => x.length >= 8)) {
      assert.ok(!stored.includes(s), `the audit collection holds a secret (${s.slice(0, 10)}…)`);
      assert.ok(!exported.includes(s), `the export holds a secret (${s.slice(0, 10)}…)`);
    }
  });

  describe('reading the trail', () => {
    const list = async (query: string): Promise<Entry[]> => {
      const res = await admin().get(`/access/audit/${query}`);
      assert.equal(res.status, 200, res.text);
      return res.body as Entry[];
    };
    const seqOf = (e: Entry) => Number(e.id.slice(2));

    it('pages newest first', async () => {
      const total = await api.mongo.db!.collection('audit_entries').countDocuments();
      const first = await list('?page=1&page_size=3');
      const second = await list('?page=2&page_size=3');
      assert.deepEqual([...first, ...second].map(seqOf), [
        total,
        total - 1,
        total - 2,
        total - 3,
        total - 4,
        total - 5,
      ]);
      assert.equal((await admin().get('/access/audit/?page_size=101')).status, 422);
    });

    it('filters by actor (user or key), action, target and time, each alone and together', async () => {
      const byUser = await list(`?actor=${user.id}&page_size=100`);
      assert.ok(byUser.length >= 3, JSON.stringify(byUser));
      assert.ok(byUser.every((e) => e.actor.user_id === user.id));
      const byKey = await list(`?actor=${user.keyId}&page_size=100`);
      assert.ok(byKey.length >= 1 && byKey.every((e) => e.actor.key_id === user.keyId));
      const signIns = await list('?action=session.sign_in&page_size=100');
      assert.deepEqual(
        signIns.map((e) => e.outcome),
        [303, 303, 303, 401, 401],
      );
      const onUser = await list(`?target_type=user&target_id=${user.id}&page_size=100`);
      assert.deepEqual(onUser.map((e) => e.action).sort(), [
        'session.sign_in',
        'session.sign_in',
        'user.create',
        'user.update',
        'user.update',
      ]);
      assert.deepEqual(
        (await list(`?action=session.sign_in&actor=${user.id}&page_size=100`)).map((e) => e.outcome),
        [303, 303],
      );
      const everything = await list('?page_size=100');
      const middle = everything[Math.floor(everything.length / 2)] as Entry;
      const from = await list(`?from=${encodeURIComponent(middle.time)}&page_size=100`);
      const before = await list(`?to=${encodeURIComponent(middle.time)}&page_size=100`);
      assert.ok(from.every((e) => e.time >= middle.time) && from.some((e) => e.id === middle.id));
      assert.ok(before.every((e) => e.time < middle.time) && !before.some((e) => e.id === middle.id));
      assert.equal(from.length + before.length, everything.length);
      assert.equal((await admin().get('/access/audit/?from=yesterday')).status, 422);
    });

    it('exports JSON lines, oldest first, with the same filters', async () => {
      const res = await admin().get('/access/audit/export/');
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') ?? '', /^application\/x-ndjson/);
      const lines = res.text.trimEnd().split('\n');
      const entries = lines.map((l) => JSON.parse(l) as Entry);
      const total = await api.mongo.db!.collection('audit_entries').countDocuments();
      assert.deepEqual(
        entries.map(seqOf),
        Array.from({ length: total }, (_, i) => i + 1),
      );
      const signIns = (await admin().get('/access/audit/export/?action=session.sign_in')).text.trimEnd().split('\n');
      assert.deepEqual(
        signIns.map((l) => (JSON.parse(l) as Entry).id),
        (await list('?action=session.sign_in&page_size=100')).map((e) => e.id).reverse(),
      );
    });

    it('refuses a non-admin on the listing, the export and verify (403), and reading changes nothing', async () => {
      const others: [string, ReturnType<typeof client>][] = [];
      for (const role of ['viewer', 'operator', 'builder']) {
        const username = `${role}-${randomBytes(3).toString('hex')}`;
        const someone = await admin().post('/access/users/', { username, role });
        const key = await admin().post('/access/keys/', { name: role, user_id: someone.body.id });
        others.push([role, client(api.baseUrl, { authorization: `Bearer ${key.body.key}` })]);
      }
      const before = await all();
      for (const [role, theirs] of others)
        for (const path of ['/access/audit/', '/access/audit/export/', '/access/audit/verify/']) {
          const res = await theirs.get(path);
          assert.equal(res.status, 403, `${role} ${path}: ${res.text}`);
          assert.match(res.text, /audit\.read/);
          assert.ok(!res.text.includes('AE1'), 'no entry in a refusal');
        }
      assert.equal(await all(), before, 'no entry changed or added: a read, refused or not, is no entry');
      assert.deepEqual((await admin().get('/access/audit/verify/')).body.ok, true);
    });
  });
});

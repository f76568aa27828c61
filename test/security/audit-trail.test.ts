import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Router from '@koa/router';
import Koa from 'koa';
import pino from 'pino';
import { noteAudit } from '../../src/access/audit-note';
import { auditRecorder } from '../../src/http/audit-recorder';
import { auditWriter } from '../../src/http/audit-writer';
import { requestIds } from '../../src/http/request-id';
import { hashApiKey } from '../../src/http/api-keys';
import { createAuditTrail } from '../../src/db/audit-trail';
import { startApi, type TestApi } from '../support/api';
import { type AuditEntryView as Entry, auditEntryOf } from '../support/audit';
import { client } from '../support/http';
import { realValue } from '../support/operation-walk';
import { pollDelays } from '../support/poll';
import { rawClient, type RawClient } from '../support/raw-http';
import { type Seeded, seed } from './attack-corpus';

const KEY = `spur_audit-admin-${randomBytes(8).toString('hex')}`;
const WITH_KEY = { authorization: `Bearer ${KEY}` };

/**
 * What each state-changing operation of the OpenAPI document is recorded as: its action and the
 * target's type. A route added later fails the walk until it is named here, so its name is read
 * by someone (and, without an entry, it fails anyway).
 */
const EXPECTED: Record<string, [action: string, targetType: string]> = {
  'POST /wf/process_pause_action/{run_id}/': ['pause.decide', 'run'],
  'POST /wf/cancel_workflow/{run_id}/': ['run.cancel', 'run'],
  'POST /cancel_workflow/{run_id}/': ['run.cancel', 'run'],
  'POST /wf/': ['workflow.create', 'workflow'],
  'POST /wf/upload_test_files/': ['test_files.upload', 'test_files'],
  'PUT /wf/{workflow_id}/': ['workflow.update', 'workflow'],
  'DELETE /wf/{workflow_id}/': ['workflow.delete', 'workflow'],
  'PUT /wf/{workflow_id}/reset/': ['workflow.reset', 'workflow'],
  'POST /wf/{workflow_id}/duplicate/': ['workflow.duplicate', 'workflow'],
  'POST /wf/{workflow_id}/pause/': ['workflow.pause', 'workflow'],
  'POST /wf/{workflow_id}/resume/': ['workflow.resume', 'workflow'],
  'POST /wf/{workflow_id}/run/': ['run.start', 'workflow'],
  'POST /wf/{workflow_id}/runv2/': ['run.start', 'workflow'],
  'POST /wf/{workflow_id}/start_run/': ['run.start', 'workflow'],
  'POST /wf/{workflow_id}/start_batch_run/': ['run.start_batch', 'workflow'],
  'POST /wf/{workflow_id}/run_partial/': ['run.start_partial', 'workflow'],
  'POST /wf/{workflow_id}/schedules/': ['schedule.create', 'workflow'],
  'PUT /schedules/{schedule_id}/': ['schedule.update', 'schedule'],
  'DELETE /schedules/{schedule_id}/': ['schedule.delete', 'schedule'],
  'POST /schedules/{schedule_id}/pause/': ['schedule.pause', 'schedule'],
  'POST /schedules/{schedule_id}/unpause/': ['schedule.unpause', 'schedule'],
  'POST /schedules/{schedule_id}/trigger/': ['schedule.trigger', 'schedule'],
  'POST /schedules/{schedule_id}/backfill/': ['schedule.backfill', 'schedule'],
  'POST /wf/{workflow_id}/triggers/': ['trigger.create', 'workflow'],
  'PUT /triggers/{trigger_id}/': ['trigger.update', 'trigger'],
  'DELETE /triggers/{trigger_id}/': ['trigger.delete', 'trigger'],
  'POST /triggers/{trigger_id}/rotate/': ['trigger.rotate', 'trigger'],
  'POST /hooks/{token}': ['hook.deliver', 'trigger'],
  'POST /callbacks/{token}': ['callback.deliver', 'run'],
  'POST /run/{run_id}/rerun/': ['run.rerun', 'run'],
  'POST /runs/actions/': ['run_action.create', 'run_action'],
  'POST /runs/actions/{action_id}/cancel/': ['run_action.cancel', 'run_action'],
  'DELETE /files/{workflow_id}': ['test_files.delete', 'workflow'],
  'DELETE /files/{workflow_id}/{file_name}': ['test_file.delete', 'test_file'],
  'POST /templates/instantiate/': ['template.instantiate', 'template'],
  'PUT /code_convert/{workflow_id}': ['workflow.update', 'workflow'],
  'POST /code_convert/create_from_code': ['code_convert.create_from_code', 'code_convert'],
  'POST /code_convert/code_to_definition': ['code_convert.code_to_definition', 'code_convert'],
  'POST /code_convert/definition_to_code': ['code_convert.definition_to_code', 'code_convert'],
  'POST /ai/generate_schema/': ['ai.generate_schema', 'ai'],
  'POST /ai/generate_message/': ['ai.generate_message', 'ai'],
  'POST /evals/suites/': ['eval_suite.create', 'eval_suite'],
  'POST /evals/suites/from_runs/': ['eval_suite.create_from_runs', 'eval_suite'],
  'DELETE /evals/suites/{suite_id}/': ['eval_suite.delete', 'eval_suite'],
  'POST /evals/launch/': ['eval.launch', 'eval'],
  'POST /evals/runs/{eval_run_id}/cancel/': ['eval_run.cancel', 'eval_run'],
  'POST /evals/compare/': ['eval.compare', 'eval'],
  'POST /rag/collections/preview_chunk/': ['collection.preview_chunk', 'collection'],
  'POST /rag/collections/': ['collection.create', 'collection'],
  'DELETE /rag/collections/{collection_id}/': ['collection.delete', 'collection'],
  'POST /rag/collections/{collection_id}/documents/': ['document.create', 'collection'],
  'DELETE /rag/collections/{collection_id}/documents/{document_id}/': ['document.delete', 'document'],
  'POST /rag/indices/': ['index.create', 'index'],
  'DELETE /rag/indices/{index_id}/': ['index.delete', 'index'],
  'POST /rag/indices/{index_id}/retrieve/': ['index.retrieve', 'index'],
  'POST /env-mgmt/': ['credential.set', 'credential'],
  'DELETE /env-mgmt/{name}': ['credential.delete', 'credential'],
  'POST /google/store_token/': ['credential.set_google_token', 'credential'],
  'POST /ds/': ['dataset.create', 'dataset'],
  'DELETE /ds/{dataset_id}/': ['dataset.delete', 'dataset'],
  'DELETE /of/{output_file_id}/': ['output_file.delete', 'output_file'],
  'POST /user/': ['chat_user.create', 'chat_user'],
  'PATCH /user/{user_id}/': ['chat_user.update', 'chat_user'],
  'DELETE /user/{user_id}/': ['chat_user.delete', 'chat_user'],
  'POST /session/': ['chat_session.create', 'chat_session'],
  'POST /session/test/': ['chat_session.test', 'chat_session'],
  'DELETE /session/{session_id}/': ['chat_session.delete', 'chat_session'],
  'POST /v1/chat/completions': ['chat_completion.create', 'chat_completion'],
  'POST /api/v1/chat/completions': ['chat_completion.create', 'chat_completion'],
  'PUT /usage/prices/{provider}/{name}': ['price.update', 'price'],
  'DELETE /usage/prices/{provider}/{name}': ['price.delete', 'price'],
  'PUT /limits/': ['limit.update', 'limit'],
  'PUT /limits/fleet/': ['fleet_limit.update', 'limit'],
  'POST /limits/breaker/': ['limit.breaker', 'limit'],
  'POST /limits/fleet/breaker/': ['fleet_limit.breaker', 'limit'],
  'PUT /wf/{workflow_id}/budget/': ['budget.update', 'workflow'],
  'DELETE /wf/{workflow_id}/budget/': ['budget.delete', 'workflow'],
  'PUT /wf/{workflow_id}/retention/': ['retention.update', 'workflow'],
  'DELETE /run/{run_id}/': ['run.delete', 'run'],
  'POST /runs/retention/prune/': ['retention.prune', 'retention'],
  'PUT /wf/{workflow_id}/mcp/': ['mcp_tool.update', 'workflow'],
  'POST /mcp': ['mcp.call', 'mcp'],
  'POST /access/users/': ['user.create', 'user'],
  'PUT /access/users/{id}/': ['user.update', 'user'],
  'DELETE /access/users/{id}/': ['user.delete', 'user'],
  'POST /access/keys/': ['key.create', 'key'],
  'DELETE /access/keys/{id}/': ['key.delete', 'key'],
  'POST /access/workspaces/': ['workspace.create', 'workspace'],
  'PUT /access/workspaces/{id}/': ['workspace.update', 'workspace'],
  'DELETE /access/workspaces/{id}/': ['workspace.delete', 'workspace'],
  'PUT /access/workspaces/{id}/members/{user_id}': ['member.update', 'user'],
  'DELETE /access/workspaces/{id}/members/{user_id}': ['member.delete', 'user'],
  'PUT /access/me/': ['session.switch_workspace', 'workspace'],
};

interface Operation {
  method: string;
  path: string;
  audit?: { action: string; target_type: string };
}

describe('security: the audit trail records every state-changing request, and notices when it is changed', function () {
  this.timeout(300_000);
  let api: TestApi;
  let raw: RawClient;
  let seeded: Seeded;
  const admin = () => client(api.baseUrl, WITH_KEY);

  const entryOf = (requestId: string, request = '') => auditEntryOf(admin(), requestId, request);

  async function makeUser(role: string): Promise<{ id: string; key: string; keyId: string }> {
    const user = await admin().post('/access/users/', { username: `${role}-${randomBytes(3).toString('hex')}`, role });
    assert.equal(user.status, 201, user.text);
    const key = await admin().post('/access/keys/', { name: `${role} key`, user_id: user.body.id });
    assert.equal(key.status, 201, key.text);
    return { id: user.body.id, key: key.body.key, keyId: key.body.id };
  }

  before(async () => {
    api = await startApi({ SPUR_API_KEY_HASHES: hashApiKey(KEY), SPUR_WEB_UI: 'false' });
    raw = rawClient(api.baseUrl.replace(/\/api$/, ''));
    seeded = await seed(api, WITH_KEY);
  });
  after(async () => {
    raw?.close();
    await api?.close();
  });

  it('stores the entry before a byte of the answer goes out, even when the handler streams its own (an MCP call waiting on its run)', async () => {
    const tool = `audit_tool_${randomBytes(3).toString('hex')}`;
    const published = await admin().put(`/wf/${seeded.workflow}/mcp/`, { enabled: true, tool_name: tool });
    assert.equal(published.status, 200, published.text);
    const requestId = `mcp-${randomBytes(4).toString('hex')}`;
    const aborter = new AbortController();
    // No worker runs the tool's run: the answer's stream stays open, and only its headers arrive.
    const res = await fetch(`${api.baseUrl}/mcp`, {
      method: 'POST',
      signal: aborter.signal,
      headers: {
        ...WITH_KEY,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'x-request-id': requestId,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: tool, arguments: { x: 'y' } },
      }),
    });
    const stored = await api.mongo.db!.collection('audit_entries').findOne({ request_id: requestId });
    aborter.abort();
    assert.equal(res.status, 200);
    assert.ok(stored, 'the entry is in MongoDB when the headers arrive');
    assert.deepEqual([stored.action, stored.target, stored.outcome], ['mcp.call', { type: 'mcp', id: null }, 200]);
  });

  it('stores the entry before the answer when the handler answers 202 and ends at once (an MCP notification)', async () => {
    const requestId = `mcp-note-${randomBytes(4).toString('hex')}`;
    const res = await fetch(`${api.baseUrl}/mcp`, {
      method: 'POST',
      headers: {
        ...WITH_KEY,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'x-request-id': requestId,
      },
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    });
    const stored = await api.mongo.db!.collection('audit_entries').findOne({ request_id: requestId });
    assert.equal(res.status, 202);
    assert.ok(stored, 'the entry is in MongoDB when the answer arrives');
    assert.equal(stored.outcome, 202);
  });

  it('writes an entry for every state-changing operation of the OpenAPI document, with its action, target and status, refusals (404, 422) included', async () => {
    const doc = (await admin().get('/openapi.json')).body as {
      paths: Record<string, Record<string, { 'x-spur-audit'?: Operation['audit'] }>>;
    };
    const operations: Operation[] = Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.entries(methods)
        .filter(([method]) => method !== 'get')
        .map(([method, op]) => ({ method: method.toUpperCase(), path, audit: op['x-spur-audit'] })),
    );
    const unnamed = operations.map((o) => `${o.method} ${o.path}`).filter((k) => !(k in EXPECTED));
    assert.deepEqual(unnamed, [], 'a state-changing route the audit walk does not know: add its expected action');
    for (const op of operations)
      assert.deepEqual(
        [op.audit?.action, op.audit?.target_type],
        EXPECTED[`${op.method} ${op.path}`],
        `${op.method} ${op.path}: OpenAPI's x-spur-audit`,
      );

    const throwaway = await makeUser('viewer');
    const adminKeyId = (await admin().get('/access/me/')).body.key_id as string;
    assert.match(adminKeyId, /^config:[0-9a-f]{12}$/);
    // The role matrix's real ids, with the throwaway user and key as the access routes' targets.
    const targets = { ...seeded, accessUser: throwaway.id, accessKey: throwaway.keyId };
    const fill = (path: string, param: string): string => realValue(param, path, targets);
    // Deletes last (the workflow's last of all), so the others still find what they act on; the hook before its trigger rotates.
    const rank = (o: Operation) =>
      o.path.startsWith('/hooks/') ? -1 : o.method !== 'DELETE' ? 0 : o.path === '/wf/{workflow_id}/' ? 2 : 1;
    const ordered = [...operations].sort((a, b) => rank(a) - rank(b));

    for (const [i, op] of ordered.entries()) {
      const params = [...op.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1] as string);
      const wire = `/api${op.path.replace(/\{(\w+)\}/g, (_, p: string) => encodeURIComponent(fill(op.path, p)))}`;
      const requestId = `walk-${i}-${randomBytes(4).toString('hex')}`;
      // A JSON array: every body this API reads is an object (422), so no request waits on a run that never ends.
      const reply = await raw.request({
        method: op.method,
        path: wire,
        headers: {
          ...WITH_KEY,
          'x-request-id': requestId,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: '[]',
      });
      assert.equal(reply.headers['x-request-id'], requestId, `${op.method} ${wire} answers its request id`);
      const what = `${op.method} ${op.path} → ${reply.status} ${reply.body.toString('utf8').slice(0, 200)}`;
      const entry = await entryOf(requestId, what);
      const [action, targetType] = EXPECTED[`${op.method} ${op.path}`] as [string, string];
      const answered = /json/.test(String(reply.headers['content-type']))
        ? JSON.parse(reply.body.toString('utf8'))
        : {};
      // A callback token the walk makes up is no token of ours: 404, before any run is named.
      const targetId =
        op.path === '/callbacks/{token}'
          ? null
          : op.path === '/hooks/{token}'
            ? reply.status === 404
              ? null
              : seeded.trigger
            : params.length > 0
              ? params
                  .slice(
                    -(op.path === '/usage/prices/{provider}/{name}' || op.path.startsWith('/files/{workflow_id}/')
                      ? 2
                      : 1),
                  )
                  .map((p) => fill(op.path, p))
                  .join('/')
              : action === `${targetType}.create` && reply.status < 300
                ? (answered.id ?? null)
                : null;
      assert.deepEqual(
        { action: entry.action, target: entry.target, outcome: entry.outcome },
        { action, target: { type: targetType, id: targetId }, outcome: reply.status },
        what,
      );
      if (op.path === '/hooks/{token}' && reply.status !== 404)
        assert.deepEqual(entry.actor, { via: 'webhook' }, `${what}: the token, not a key, is a webhook's credential`);
      else assert.deepEqual(entry.actor, { key_id: adminKeyId, via: 'key' }, what);
      assert.equal(entry.ip, '127.0.0.1', what);
      assert.ok(!JSON.stringify(entry).includes(seeded.hookToken), `${what}: the webhook's token is in the entry`);
    }
    const statuses = new Set<number>(
      (await admin().get('/access/audit/?page_size=100')).body.map((e: Entry) => e.outcome),
    );
    assert.ok(
      [...statuses].some((s) => s >= 200 && s < 300) && statuses.has(422) && statuses.has(404),
      [...statuses].join(),
    );
  });

  it('records a refusal by the gate with its status: no key (401), a wrong key (401), a viewer building (403), another origin (403)', async () => {
    const viewer = await makeUser('viewer');
    const cases: { headers: Record<string, string>; status: number; actor: Entry['actor'] }[] = [
      { headers: {}, status: 401, actor: { via: 'anonymous' } },
      { headers: { authorization: 'Bearer spur_not-a-key' }, status: 401, actor: { via: 'anonymous' } },
      {
        headers: { authorization: `Bearer ${viewer.key}` },
        status: 403,
        actor: { user_id: viewer.id, key_id: viewer.keyId, via: 'key' },
      },
      // The Origin is checked before anyone is identified.
      { headers: { ...WITH_KEY, origin: 'https://evil.example' }, status: 403, actor: { via: 'anonymous' } },
    ];
    const before = (await api.models.Workflow.countDocuments()) as number;
    for (const c of cases) {
      const requestId = `gate-${randomBytes(4).toString('hex')}`;
      const res = await raw.request({
        method: 'POST',
        path: '/api/wf/',
        headers: { ...c.headers, 'content-type': 'application/json', 'x-request-id': requestId },
        body: JSON.stringify({ name: 'refused' }),
      });
      assert.equal(res.status, c.status, res.body.toString('utf8'));
      const entry = await entryOf(requestId);
      assert.equal(entry.outcome, c.status);
      assert.equal(entry.action, 'workflow.create');
      assert.deepEqual(entry.target, { type: 'workflow', id: null });
      assert.deepEqual(entry.actor, c.actor);
      assert.ok(!JSON.stringify(entry).includes('not-a-key'), 'a presented key never reaches the trail');
    }
    assert.equal(await api.models.Workflow.countDocuments(), before, 'no refused request made a workflow');
  });

  it('records a request to no route (an unknown path or method under /api) as api.no_route, and no reading request', async () => {
    const unknown = await raw.request({
      method: 'POST',
      path: '/api/no-such-thing/secret-looking-segment',
      headers: { ...WITH_KEY, 'x-request-id': 'no-route-1' },
    });
    assert.equal(unknown.status, 404);
    const entry = await entryOf('no-route-1');
    assert.deepEqual([entry.action, entry.target, entry.outcome], ['api.no_route', { type: 'route', id: null }, 404]);
    await raw.request({ method: 'GET', path: '/api/wf/', headers: { ...WITH_KEY, 'x-request-id': 'read-1' } });
    assert.equal((await admin().get('/access/audit/?request_id=read-1')).body.length, 0, 'a read is no entry');
  });

  it('answers every request with an X-Request-Id: a client’s when it is short and printable, a new one otherwise', async () => {
    const kept = await raw.request({
      method: 'GET',
      path: '/api/wf/',
      headers: { ...WITH_KEY, 'x-request-id': 'abc-123' },
    });
    assert.equal(kept.headers['x-request-id'], 'abc-123');
    for (const sent of ['a b', 'x'.repeat(129), 'é', '']) {
      const res = await raw.request({
        method: 'GET',
        path: '/api/wf/',
        headers: { ...WITH_KEY, ...(sent ? { 'x-request-id': Buffer.from(sent).toString('latin1') } : {}) },
      });
      assert.match(String(res.headers['x-request-id']), /^[0-9a-f-]{36}$/, JSON.stringify(sent));
    }
  });

  it('records a reading request whose handler left a note (an OpenID callback signs someone in with a GET), and no other', async () => {
    // The recorder and the store of the api, around a route of the test's own, as an OpenID callback would be.
    const app = new Koa();
    const trail = createAuditTrail(api.models, Buffer.from(api.env.SPUR_SECRET_KEY as string, 'base64'));
    app.use(requestIds());
    app.use(
      auditRecorder({
        writer: auditWriter(trail, pino({ level: 'silent' })),
        apiPrefix: '/api',
        route: () => null,
        site: () => null,
        clientAddress: () => '192.0.2.7',
      }),
    );
    const router = new Router();
    router.get('/oidc/callback', (ctx) => {
      noteAudit(ctx.state, { action: 'session.sign_in', target: { type: 'user', id: 'UA77' } });
      ctx.redirect('/');
    });
    router.get('/page', (ctx) => {
      ctx.body = 'a page';
    });
    app.use(router.routes());
    const server = http.createServer(app.callback()).listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    try {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const signIn = await fetch(`${base}/oidc/callback?code=${randomBytes(8).toString('hex')}`, {
        redirect: 'manual',
      });
      const page = await fetch(`${base}/page`);
      const entry = await entryOf(signIn.headers.get('x-request-id') ?? '');
      assert.deepEqual(
        [entry.action, entry.target, entry.outcome, entry.actor, entry.ip],
        ['session.sign_in', { type: 'user', id: 'UA77' }, 302, { via: 'anonymous' }, '192.0.2.7'],
      );
      const none = await admin().get(`/access/audit/?request_id=${page.headers.get('x-request-id')}`);
      assert.deepEqual(none.body, [], 'a read without a note is no entry');
    } finally {
      server.close();
    }
  });

  describe('the chain', () => {
    const entries = () => api.mongo.db!.collection('audit_entries');
    const verify = async () => {
      const res = await admin().get('/access/audit/verify/');
      assert.equal(res.status, 200, res.text);
      return res.body as { ok: boolean; entries: number; first_bad_id?: string; detail?: string };
    };
    /** The same check from a store of the test's own, walking 7 entries at a time (pages cross entries). */
    const verifyInPages = () =>
      createAuditTrail(api.models, Buffer.from(api.env.SPUR_SECRET_KEY as string, 'base64')).verify(7);

    it('verifies an untouched trail, in pages of any size', async () => {
      const count = await entries().countDocuments();
      assert.ok(count > 60, `${count} entries`);
      assert.deepEqual(await verify(), { ok: true, entries: count });
      assert.deepEqual(await verifyInPages(), { ok: true, entries: count });
    });

    it('names an entry changed in MongoDB (an outcome, an actor), and holds again once it is put back', async () => {
      for (const change of [{ outcome: 201 }, { 'actor.via': 'session' }, { action: 'workflow.read' }]) {
        const original = await entries().findOne({ seq: 5 });
        assert.ok(original);
        const field = Object.keys(change)[0] as string;
        const kept = field === 'actor.via' ? original.actor.via : original[field];
        await entries().updateOne({ seq: 5 }, { $set: change });
        const verdict = await verify();
        assert.equal(verdict.ok, false, JSON.stringify(change));
        assert.equal(verdict.first_bad_id, 'AE5', JSON.stringify(verdict));
        assert.equal((await verifyInPages()).first_bad_id, 'AE5');
        await entries().updateOne({ seq: 5 }, { $set: { [field]: kept } });
        assert.equal((await verify()).ok, true, 'put back, it holds');
      }
    });

    it('names an entry deleted from the middle, and the first of the newest entries deleted, even after more are written', async () => {
      const middle = await entries().findOne({ seq: 12 });
      assert.ok(middle);
      await entries().deleteOne({ seq: 12 });
      assert.deepEqual(
        [(await verify()).ok, (await verify()).first_bad_id, (await verifyInPages()).first_bad_id],
        [false, 'AE12', 'AE12'],
      );
      await entries().insertOne(middle);
      assert.equal((await verify()).ok, true);

      // The head follows the newest entry just after it is stored: wait for it, as time would.
      await api.services.auditTrail.headSettled();
      const count = await entries().countDocuments();
      const removed = await entries()
        .find({ seq: { $gt: count - 2 } })
        .sort({ seq: 1 })
        .toArray();
      assert.equal(removed.length, 2);
      await entries().deleteMany({ seq: { $gt: count - 2 } });
      const verdict = await verify();
      assert.deepEqual([verdict.ok, verdict.first_bad_id], [false, `AE${count - 1}`], JSON.stringify(verdict));
      // A writer that starts afresh (another api process) goes on after the head: the gap stays.
      const other = createAuditTrail(api.models, Buffer.from(api.env.SPUR_SECRET_KEY as string, 'base64'));
      await other.append({
        time: new Date(),
        actor: { user_id: null, key_id: null, via: 'anonymous' },
        action: 'test.append',
        target: { type: 'test', id: null },
        outcome: 200,
        request_id: 'after-truncation',
        ip: '127.0.0.1',
      });
      assert.equal((await verify()).first_bad_id, `AE${count - 1}`, 'new entries do not hide the removed ones');
      await entries().insertMany(removed);
      assert.deepEqual(await verify(), { ok: true, entries: count + 1 });
    });

    it('refuses an entry re-forged without the server’s secret key (a MAC over the edited fields with another key)', async () => {
      const forger = createAuditTrail(api.models, randomBytes(32));
      const original = await entries().findOne({ seq: 3 });
      assert.ok(original);
      await entries().deleteMany({});
      await api.mongo.db!.collection('audit_head').deleteMany({});
      // The forger rewrites the whole trail under its own key: nothing of it holds under the server's.
      const { time, actor, action, target, request_id, ip } = original;
      await forger.append({ time, actor, action, target, outcome: 200, request_id, ip });
      const verdict = await verify();
      assert.deepEqual([verdict.ok, verdict.first_bad_id], [false, 'AE1']);
    });
  });
});

describe('security: an audit entry MongoDB refuses', function () {
  this.timeout(120_000);
  let api: TestApi;
  before(async () => {
    api = await startApi({ SPUR_API_KEY_HASHES: hashApiKey(KEY), SPUR_WEB_UI: 'false' });
  });
  after(async () => {
    await api?.close();
  });

  it('leaves the answer as decided, fails the health check while it waits, and is stored (chained) once MongoDB takes it', async () => {
    const http = client(api.baseUrl, WITH_KEY);
    assert.equal((await http.post('/wf/', { name: 'first' })).status, 200);
    const entries = api.mongo.db!.collection('audit_entries');
    const next = (await entries.countDocuments()) + 1;
    // A document holding the next entry's id (not its number): every insert of it is refused.
    await entries.insertOne({ _id: `AE${next}`, seq: -1 } as never);
    const created = await http.post('/wf/', { name: 'while the trail refuses' });
    assert.equal(created.status, 200, 'the workflow was made: its answer says so');
    assert.equal((await api.models.Workflow.countDocuments({ name: 'while the trail refuses' })) as number, 1);
    const degraded = await http.get('/health/');
    assert.equal(degraded.status, 503, degraded.text);
    assert.equal(degraded.body.checks.audit_trail.ok, false);
    assert.match(degraded.body.checks.audit_trail.error, /1 audit entries wait to be stored/);

    await entries.deleteOne({ seq: -1 });
    const delays = pollDelays();
    let health = await http.get('/health/');
    // The next checks store it: at once on a quiet host, later on a busy one (each waits on it 1 s).
    for (const until = Date.now() + 60_000; health.status !== 200 && Date.now() < until;) {
      await delays();
      health = await http.get('/health/');
    }
    assert.equal(health.status, 200, health.text);
    assert.match(health.body.checks.audit_trail.detail, /1 entries stored late/);
    const late = (await http.get(`/access/audit/?action=workflow.create&target_id=${created.body.id}`)).body;
    assert.equal(late.length, 1, 'the refused entry is in the trail now');
    assert.deepEqual((await http.get('/access/audit/verify/')).body, { ok: true, entries: next });
  });
});

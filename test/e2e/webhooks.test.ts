import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { hashApiKey } from '../../src/http/api-keys';
import { type Engine, startEngine, waitForRun } from '../support/engine';
import { client } from '../support/http';
import { l, n } from '../support/graphs';
import { rawClient, type RawClient, type RawReply } from '../support/raw-http';
import { startCallbackReceiver, validSignature, type CallbackReceiver } from '../support/callback-receiver';
import { openSse } from '../support/sse';
import { postChunkedNeverEnded } from '../support/chunked-post';

const KEY = 'spur_webhook-test-key-0123456789';
const SECRET = 'It is a secret to everybody 7f3a9c';
const CALLBACK_SECRET = 'callback-secret-of-the-trigger-41d2';

/** in(title, author) → out(title, author): a run that needs no sandbox. */
const echo = {
  nodes: [
    n('in', 'InputNode', { output_schema: { title: 'string', author: 'string' } }),
    n('out', 'OutputNode', { output_map: { title: 'in.title', author: 'in.author' } }),
  ],
  links: [l('in', 'out')],
};

/** GitHub's pull_request event, trimmed to what the mapping reads and a little more. */
const pullRequestEvent = {
  action: 'opened',
  number: 7,
  pull_request: { title: 'Webhooks ~/ for all', user: { login: 'octocat' } },
  sender: { login: 'octocat' },
};

const githubMapping = { title: '/pull_request/title', author: '/sender/login' };
const githubSignature = { header: 'X-Hub-Signature-256', algorithm: 'hmac-sha256', prefix: 'sha256=' };
const sign = (body: string, secret = SECRET) => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

/** Stripe's `Stripe-Signature`: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`. */
const nowSeconds = () => Math.floor(Date.now() / 1000);
const stripeSign = (body: string, t = nowSeconds(), secret = SECRET) =>
  `t=${t},v1=${createHmac('sha256', secret).update(`${t}.${body}`).digest('hex')}`;
const stripeSignature = { scheme: 'stripe', header: 'Stripe-Signature' };

let deliveries = 0;
const newDelivery = () => `72d3162e-cc78-11e3-81ab-${String(++deliveries).padStart(12, '0')}`;

describe('e2e: webhook triggers', function () {
  this.timeout(120_000);
  let engine: Engine;
  let api: Engine['http'];
  let anonymous: Engine['http'];
  let raw: RawClient;
  let receiver: CallbackReceiver;

  before(async () => {
    receiver = await startCallbackReceiver();
    engine = await startEngine({ SPUR_API_KEY_HASHES: hashApiKey(KEY) });
    api = client(engine.api.baseUrl, { authorization: `Bearer ${KEY}` });
    anonymous = engine.http;
    // The hook's URL is answered as `/api/hooks/<token>`: the raw client sends it from the origin.
    raw = rawClient(new URL(engine.api.baseUrl).origin);
  });
  after(async () => {
    raw?.close();
    await engine?.close();
    await receiver?.close();
  });

  async function newWorkflow(definition: unknown = echo): Promise<string> {
    const res = await api.post('/wf/', { name: `hooks-${Date.now()}-${Math.random()}`, definition });
    assert.equal(res.status, 200, res.text);
    return res.body.id as string;
  }

  async function newTrigger(workflowId: string, spec: Record<string, unknown>) {
    const res = await api.post(`/wf/${workflowId}/triggers/`, { name: 'hook', ...spec });
    assert.equal(res.status, 200, res.text);
    return res.body as { id: string; url: string; [k: string]: unknown };
  }

  /** POSTs `body` (exact bytes) to a hook URL, no API key. */
  function hook(url: string, body: string, headers: Record<string, string> = {}): Promise<RawReply> {
    return raw.request({
      method: 'POST',
      path: url,
      headers: { 'content-type': 'application/json', ...headers },
      body,
    });
  }
  const json = (reply: RawReply) => JSON.parse(reply.body.toString('utf8')) as Record<string, any>;

  /** The runs a trigger started, by their record (the workflow's run list, newest first). */
  async function runsOf(workflowId: string, triggerId: string) {
    const res = await api.get(`/wf/${workflowId}/runs/?page_size=100`);
    assert.equal(res.status, 200, res.text);
    return (res.body as { id: string; trigger: { id: string } | null }[]).filter((r) => r.trigger?.id === triggerId);
  }

  it('a GitHub-style signed delivery starts a run with mapped inputs, type webhook and its trigger', async () => {
    const wf = await newWorkflow();
    const trigger = await newTrigger(wf, {
      input_mapping: githubMapping,
      signature: githubSignature,
      secret: SECRET,
      dedupe_header: 'X-GitHub-Delivery',
    });
    assert.match(trigger.id, /^TR\d+$/);
    assert.match(trigger.url, /^\/api\/hooks\/[A-Za-z0-9_-]{32}$/);
    assert.equal(trigger.has_secret, true);
    assert.equal(trigger.respond, 'accepted');
    const body = JSON.stringify(pullRequestEvent);
    const delivery = newDelivery();
    const reply = await hook(trigger.url, body, {
      'X-Hub-Signature-256': sign(body),
      'X-GitHub-Delivery': delivery,
      'X-GitHub-Event': 'pull_request',
    });
    assert.equal(reply.status, 202, reply.body.toString());
    const runId = json(reply).run_id as string;
    // Recorded before the answer: readable at once.
    assert.equal((await api.get(`/run/${runId}/`)).status, 200);
    const run = await waitForRun(api, runId);
    assert.equal(run.status, 'COMPLETED');
    const full = (await api.get(`/run/${runId}/`)).body;
    assert.deepEqual(full.initial_inputs, { in: { title: 'Webhooks ~/ for all', author: 'octocat' } });
    assert.deepEqual(full.outputs.out, { title: 'Webhooks ~/ for all', author: 'octocat' });
    assert.equal(full.run_type, 'webhook');
    assert.deepEqual(full.trigger, { kind: 'webhook', id: trigger.id, scheduled_time: null, delivery_id: delivery });
    const listed = (await api.get('/run/?run_type=webhook&page_size=100')).body as { id: string }[];
    assert.ok(listed.some((r) => r.id === runId));
    const shown = await api.get(`/triggers/${trigger.id}/`);
    assert.deepEqual(
      shown.body.recent_runs.map((r: { run_id: string }) => r.run_id),
      [runId],
    );
  });

  it('refuses a wrong or missing signature with 401 and records no run', async () => {
    const wf = await newWorkflow();
    const trigger = await newTrigger(wf, { input_mapping: githubMapping, signature: githubSignature, secret: SECRET });
    const body = JSON.stringify(pullRequestEvent);
    const attempts: Record<string, string>[] = [
      { 'X-Hub-Signature-256': sign(body, 'another secret') },
      { 'X-Hub-Signature-256': sign(`${body} `) },
      { 'X-Hub-Signature-256': sign(body).slice(0, -1) },
      { 'X-Hub-Signature-256': sign(body).replace('sha256=', 'sha1=') },
      { 'X-Hub-Signature-256': '' },
      {},
    ];
    for (const headers of attempts) {
      const reply = await hook(trigger.url, body, headers);
      assert.equal(reply.status, 401, `${JSON.stringify(headers)}: ${reply.body.toString()}`);
    }
    assert.deepEqual(await runsOf(wf, trigger.id), []);
    assert.deepEqual((await api.get(`/triggers/${trigger.id}/`)).body.recent_runs, []);
    // The same body, signed right, is taken.
    assert.equal((await hook(trigger.url, body, { 'X-Hub-Signature-256': sign(body) })).status, 202);
    assert.equal((await runsOf(wf, trigger.id)).length, 1);
  });

  it('answers unknown and malformed tokens alike (404), and a rotated token is dead at once', async () => {
    const wf = await newWorkflow();
    const trigger = await newTrigger(wf, {});
    const unknown = await hook('/api/hooks/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', '{}');
    const malformed = await hook('/api/hooks/not%20a%20token!', '{}');
    const short = await hook('/api/hooks/x', '{}');
    for (const reply of [unknown, malformed, short]) {
      assert.equal(reply.status, 404);
      assert.deepEqual(json(reply), { detail: 'Not Found' });
    }
    const rotated = await api.post(`/triggers/${trigger.id}/rotate/`);
    assert.equal(rotated.status, 200, rotated.text);
    assert.notEqual(rotated.body.url, trigger.url);
    const old = await hook(trigger.url, '{"title": "t"}');
    assert.equal(old.status, 404);
    assert.deepEqual(json(old), { detail: 'Not Found' });
    const fresh = await hook(rotated.body.url as string, '{"title": "t"}');
    assert.equal(fresh.status, 202, fresh.body.toString());
    const runs = await runsOf(wf, trigger.id);
    assert.deepEqual(
      runs.map((r) => r.id),
      [json(fresh).run_id],
    );
    // Without a mapping the whole body is the InputNode's first field.
    const run = await waitForRun(api, json(fresh).run_id as string);
    assert.deepEqual((await api.get(`/run/${run.id}/`)).body.initial_inputs, { in: { title: { title: 't' } } });
  });

  it('refuses a body over max_body_bytes with 413 and no run', async () => {
    const wf = await newWorkflow();
    const trigger = await newTrigger(wf, { max_body_bytes: 200 });
    const big = JSON.stringify({ title: 'x'.repeat(1000) });
    const reply = await hook(trigger.url, big);
    assert.equal(reply.status, 413, reply.body.toString());
    assert.match(json(reply).detail, /200 bytes/);
    // Chunked (no Content-Length) and never ended: cut off while it streams, once past the limit.
    const runsBefore = (await runsOf(wf, trigger.id)).length;
    const chunked = await postChunkedNeverEnded(
      `${new URL(engine.api.baseUrl).origin}${trigger.url}`,
      Buffer.from(JSON.stringify({ title: 'y'.repeat(2000) })),
      { 'content-type': 'application/json' },
    );
    assert.equal(chunked.status, 413, chunked.body);
    assert.match(chunked.body, /200 bytes/);
    assert.equal((await runsOf(wf, trigger.id)).length, runsBefore, 'the cut-off delivery started no run');
    assert.equal((await hook(trigger.url, big)).status, 413);
    assert.equal((await runsOf(wf, trigger.id)).length, runsBefore);
    assert.ok(!(await runsOf(wf, trigger.id)).some((r) => JSON.stringify(r).includes('x'.repeat(1000))));
  });

  it('answers a repeated delivery id with the first answer (Idempotent-Replayed) and starts one run', async () => {
    const wf = await newWorkflow();
    const trigger = await newTrigger(wf, {
      input_mapping: githubMapping,
      signature: githubSignature,
      secret: SECRET,
      dedupe_header: 'X-GitHub-Delivery',
    });
    const body = JSON.stringify(pullRequestEvent);
    const headers = { 'X-Hub-Signature-256': sign(body), 'X-GitHub-Delivery': newDelivery() };
    const first = await hook(trigger.url, body, headers);
    const second = await hook(trigger.url, body, headers);
    assert.equal(first.status, 202);
    assert.equal(second.status, 202);
    assert.deepEqual(json(second), json(first));
    assert.equal(first.headers['idempotent-replayed'], undefined);
    assert.equal(second.headers['idempotent-replayed'], 'true');
    // Another delivery id is another run.
    const third = await hook(trigger.url, body, { ...headers, 'X-GitHub-Delivery': newDelivery() });
    assert.notEqual(json(third).run_id, json(first).run_id);
    const runs = await runsOf(wf, trigger.id);
    assert.equal(runs.length, 2);
  });

  it('answers 429 with Retry-After past the rate, and starts runs only for what it took', async () => {
    const wf = await newWorkflow();
    const trigger = await newTrigger(wf, { rate_per_second: 1 });
    const sent = Date.now();
    const replies = await Promise.all(Array.from({ length: 10 }, () => hook(trigger.url, '{"title": "r"}')));
    // One per one-second window: a burst this long touches at most this many windows (two when quick,
    // more on a loaded machine); the rest is refused.
    const windows = Math.floor((Date.now() - sent) / 1000) + 2;
    const taken = replies.filter((r) => r.status === 202);
    const refused = replies.filter((r) => r.status === 429);
    assert.equal(taken.length + refused.length, 10, replies.map((r) => r.status).join(','));
    assert.ok(taken.length >= 1 && taken.length <= windows, `${taken.length} taken in ${windows} windows`);
    assert.ok(refused.length >= 10 - windows, `${refused.length} refused`);
    for (const r of refused) assert.ok(Number(r.headers['retry-after']) >= 1, String(r.headers['retry-after']));
    assert.equal((await runsOf(wf, trigger.id)).length, taken.length);
  });

  it('keeps the trigger routes behind the API key while the hook needs none', async () => {
    const wf = await newWorkflow();
    const trigger = await newTrigger(wf, { secret: SECRET });
    for (const [method, path] of [
      ['POST', `/wf/${wf}/triggers/`],
      ['GET', `/wf/${wf}/triggers/`],
      ['GET', `/triggers/${trigger.id}/`],
      ['PUT', `/triggers/${trigger.id}/`],
      ['DELETE', `/triggers/${trigger.id}/`],
      ['POST', `/triggers/${trigger.id}/rotate/`],
    ] as const) {
      const res = await anonymous.request(method, path, method === 'GET' ? undefined : { name: 'x' });
      assert.equal(res.status, 401, `${method} ${path}: ${res.text}`);
    }
    // Nothing changed: same URL, still there.
    assert.equal((await api.get(`/triggers/${trigger.id}/`)).body.url, trigger.url);
    const reply = await hook(trigger.url, '{"title": "no key"}');
    assert.equal(reply.status, 202);
    // Only the exact hook path is open: a trailing slash or another method is not.
    assert.equal((await raw.request({ method: 'GET', path: trigger.url })).status, 401);
    assert.equal((await hook(`${trigger.url}/`, '{}')).status, 401);
    // A browser page of another site is refused by the gate's Origin check, as every state change is.
    const crossSite = await hook(trigger.url, '{"title": "csrf"}', { origin: 'https://evil.example' });
    assert.equal(crossSite.status, 403);
    assert.equal((await runsOf(wf, trigger.id)).length, 1);
  });

  it('never shows the secret: create, get, list, update and rotate answers hold no trace of it', async () => {
    const wf = await newWorkflow();
    const created = await api.post(`/wf/${wf}/triggers/`, {
      name: 'secret keeper',
      signature: githubSignature,
      secret: SECRET,
    });
    assert.equal(created.status, 200, created.text);
    const id = created.body.id as string;
    const answers = [
      created,
      await api.get(`/triggers/${id}/`),
      await api.get(`/wf/${wf}/triggers/`),
      await api.put(`/triggers/${id}/`, { name: 'renamed', signature: githubSignature }),
      await api.post(`/triggers/${id}/rotate/`),
    ];
    for (const a of answers) {
      assert.equal(a.status, 200, a.text);
      assert.ok(!a.text.includes(SECRET), a.text);
      assert.ok(!a.text.includes('secret_sealed'), a.text);
    }
    // The PUT left the secret out: it is kept, and signed deliveries still pass.
    const now = (await api.get(`/triggers/${id}/`)).body;
    assert.equal(now.name, 'renamed');
    assert.equal(now.has_secret, true);
    const body = '{"title": "kept"}';
    assert.equal((await hook(now.url as string, body, { 'X-Hub-Signature-256': sign(body) })).status, 202);
    // Nor is it in the database in the clear.
    const stored = await engine.api.models.WebhookTrigger.findById(id).lean();
    assert.ok(!JSON.stringify(stored).includes(SECRET));
    assert.ok(!JSON.stringify(stored).includes((now.url as string).split('/').pop() as string));
  });

  it('a stripe-signed delivery (t within tolerance_seconds, v1 over "<t>.<body>") starts a run with its inputs', async () => {
    const wf = await newWorkflow();
    const trigger = await newTrigger(wf, { input_mapping: githubMapping, signature: stripeSignature, secret: SECRET });
    assert.deepEqual(trigger.signature, {
      scheme: 'stripe',
      header: 'Stripe-Signature',
      algorithm: 'hmac-sha256',
      prefix: '',
      tolerance_seconds: 300,
    });
    const body = JSON.stringify(pullRequestEvent);
    // Signed a little while ago (inside the default 300 s), and a second v1 as while a secret is rolled.
    const t = nowSeconds() - 200;
    const other = createHmac('sha256', 'the previous secret 0123').update(`${t}.${body}`).digest('hex');
    const reply = await hook(trigger.url, body, { 'Stripe-Signature': `${stripeSign(body, t)},v1=${other}` });
    assert.equal(reply.status, 202, reply.body.toString());
    const run = await waitForRun(api, json(reply).run_id as string);
    assert.equal(run.status, 'COMPLETED');
    assert.deepEqual((await api.get(`/run/${run.id}/`)).body.initial_inputs, {
      in: { title: 'Webhooks ~/ for all', author: 'octocat' },
    });
  });

  it('refuses a stripe delivery replayed after its tolerance, dated beyond it, or with a wrong v1 (401), and starts no run', async () => {
    const wf = await newWorkflow();
    const trigger = await newTrigger(wf, {
      input_mapping: githubMapping,
      signature: { ...stripeSignature, tolerance_seconds: 60 },
      secret: SECRET,
      // Eleven deliveries follow at once: over the default rate (10/s), which is checked first, some would be 429.
      rate_per_second: 100,
    });
    assert.equal((trigger.signature as { tolerance_seconds: number }).tolerance_seconds, 60);
    const body = JSON.stringify(pullRequestEvent);
    const first = await hook(trigger.url, body, { 'Stripe-Signature': stripeSign(body) });
    assert.equal(first.status, 202, first.body.toString());
    const runsAfterFirst = (await runsOf(wf, trigger.id)).length;
    assert.equal(runsAfterFirst, 1);
    // A t other than the signed one by construction: now minus a second could be the signed t itself
    // once the clock has ticked since it was signed.
    const signed = stripeSign(body);
    const signedT = Number(/t=(\d+)/.exec(signed)?.[1]);
    const goodV1 = signed.split(',v1=')[1] as string;
    const attempts: [string, string][] = [
      ['a replay signed 61 s ago (tolerance 60 s)', stripeSign(body, nowSeconds() - 61)],
      ['a delivery signed an hour ago', stripeSign(body, nowSeconds() - 3600)],
      ['a delivery dated 120 s ahead', stripeSign(body, nowSeconds() + 120)],
      ['a wrong v1', stripeSign(body, nowSeconds(), 'another secret of 16+ bytes')],
      ['a v1 of another body', stripeSign(`${body} `)],
      ['a t not the one signed', `t=${signedT - 1},v1=${goodV1}`],
      ['no t', `v1=${goodV1}`],
      ['no v1', `t=${nowSeconds()}`],
      ['a GitHub-style signature', sign(body)],
    ];
    for (const [what, header] of attempts) {
      const reply = await hook(trigger.url, body, { 'Stripe-Signature': header });
      assert.equal(reply.status, 401, `${what}: ${reply.body.toString()}`);
    }
    assert.equal((await hook(trigger.url, body)).status, 401, 'no header');
    assert.equal((await runsOf(wf, trigger.id)).length, runsAfterFirst, 'no run for any refused delivery');
  });

  it('refuses a secret under 16 bytes (422) on create and on update, keeping the stored one', async () => {
    const wf = await newWorkflow();
    const short = 'fifteen bytes!!';
    assert.equal(Buffer.byteLength(short), 15);
    const created = await api.post(`/wf/${wf}/triggers/`, { name: 'x', signature: githubSignature, secret: short });
    assert.equal(created.status, 422, created.text);
    assert.deepEqual(created.body.detail[0].loc, ['body', 'secret']);
    assert.match(created.body.detail[0].msg, /at least 16 bytes/);
    assert.deepEqual((await api.get(`/wf/${wf}/triggers/`)).body, [], 'nothing saved');
    // Bytes, not characters: eight two-byte letters are 16 bytes.
    const trigger = await newTrigger(wf, { signature: githubSignature, secret: 'é'.repeat(8) });
    const updated = await api.put(`/triggers/${trigger.id}/`, { name: 'x', signature: githubSignature, secret: short });
    assert.equal(updated.status, 422, updated.text);
    assert.deepEqual(updated.body.detail[0].loc, ['body', 'secret']);
    // The stored secret still signs: the refused one was not saved.
    const body = '{"title": "kept"}';
    assert.equal((await hook(trigger.url, body, { 'X-Hub-Signature-256': sign(body, 'é'.repeat(8)) })).status, 202);
    assert.equal((await hook(trigger.url, body, { 'X-Hub-Signature-256': sign(body, short) })).status, 401);
  });

  it('refuses unknown fields of a trigger, its signature and its callback (422 naming each), and saves nothing', async () => {
    const wf = await newWorkflow();
    const cases: [Record<string, unknown>, (string | number)[]][] = [
      [{ name: 'x', sekret: SECRET }, ['body', 'sekret']],
      [
        { name: 'x', signature: { ...githubSignature, secret: SECRET }, secret: SECRET },
        ['body', 'signature', 'secret'],
      ],
      [
        { name: 'x', callback: { url: `${receiver.url}/cb`, secret: CALLBACK_SECRET, headers: { a: 'b' } } },
        ['body', 'callback', 'headers'],
      ],
      [
        { name: 'x', signature: { ...githubSignature, tolerance_seconds: 60 }, secret: SECRET },
        ['body', 'signature', 'tolerance_seconds'],
      ],
      [
        { name: 'x', signature: { ...stripeSignature, algorithm: 'hmac-sha1' }, secret: SECRET },
        ['body', 'signature', 'algorithm'],
      ],
    ];
    for (const [body, loc] of cases) {
      const res = await api.post(`/wf/${wf}/triggers/`, body);
      assert.equal(res.status, 422, `${JSON.stringify(body)}: ${res.text}`);
      assert.deepEqual(
        (res.body.detail as { loc: unknown[] }[]).map((d) => d.loc),
        [loc],
        res.text,
      );
    }
    assert.deepEqual((await api.get(`/wf/${wf}/triggers/`)).body, []);
    const trigger = await newTrigger(wf, {});
    const put = await api.put(`/triggers/${trigger.id}/`, { name: 'renamed', rate: 5 });
    assert.equal(put.status, 422, put.text);
    assert.deepEqual(put.body.detail[0].loc, ['body', 'rate']);
    assert.equal((await api.get(`/triggers/${trigger.id}/`)).body.name, 'hook');
  });

  it('lets no delivery set a callback: callback fields in its body or headers get no POST, the run has none', async () => {
    const wf = await newWorkflow();
    const trigger = await newTrigger(wf, { input_mapping: { title: '/title', author: '/author' } });
    const body = JSON.stringify({
      title: 'sneaky',
      author: 'me',
      callback: { url: `${receiver.url}/from-body`, secret: CALLBACK_SECRET },
      callback_url: `${receiver.url}/from-body-url`,
    });
    const reply = await hook(trigger.url, body, {
      'X-Callback-URL': `${receiver.url}/from-header`,
      'Callback-Url': `${receiver.url}/from-header-2`,
    });
    assert.equal(reply.status, 202, reply.body.toString());
    const runId = json(reply).run_id as string;
    assert.equal((await waitForRun(api, runId)).status, 'COMPLETED');
    const callbacks = await api.get(`/run/${runId}/callbacks/`);
    assert.equal(callbacks.status, 200, callbacks.text);
    assert.equal(callbacks.body.callback, null, 'the run has no callback');
    assert.deepEqual(callbacks.body.deliveries, []);
    // A fence: a run with a callback, started after the first ended; once its POST is in, the
    // first run's would be too.
    const fenced = await newTrigger(wf, {
      input_mapping: { title: '/title', author: '/author' },
      callback: { url: `${receiver.url}/fence`, secret: CALLBACK_SECRET },
    });
    assert.equal((await hook(fenced.url, '{"title": "f", "author": "f"}')).status, 202);
    await receiver.waitFor('/fence', 1);
    assert.deepEqual(
      receiver.received.filter((r) => r.path.startsWith('/from-')).map((r) => r.path),
      [],
      'no POST to any address the delivery named',
    );
  });

  it('refuses a signature without a secret (422), and unknown workflows and triggers (404)', async () => {
    const wf = await newWorkflow();
    const noSecret = await api.post(`/wf/${wf}/triggers/`, { name: 'x', signature: githubSignature });
    assert.equal(noSecret.status, 422, noSecret.text);
    assert.deepEqual(noSecret.body.detail[0].loc, ['body', 'secret']);
    const trigger = await newTrigger(wf, { signature: githubSignature, secret: SECRET });
    const removeSecret = await api.put(`/triggers/${trigger.id}/`, {
      name: 'x',
      signature: githubSignature,
      secret: null,
    });
    assert.equal(removeSecret.status, 422, removeSecret.text);
    assert.equal((await api.get(`/triggers/${trigger.id}/`)).body.has_secret, true);
    assert.equal((await api.post('/wf/S999999/triggers/', { name: 'x' })).status, 404);
    assert.equal((await api.get('/wf/S999999/triggers/')).status, 404);
    for (const [method, path] of [
      ['GET', '/triggers/TR999999/'],
      ['PUT', '/triggers/TR999999/'],
      ['DELETE', '/triggers/TR999999/'],
      ['POST', '/triggers/TR999999/rotate/'],
    ] as const)
      assert.equal((await api.request(method, path, method === 'PUT' ? { name: 'x' } : undefined)).status, 404);
    assert.deepEqual(
      ((await api.get(`/wf/${wf}/triggers/`)).body as { id: string }[]).map((t) => t.id),
      [trigger.id],
    );
  });

  it('answers with the outputs for respond: result', async () => {
    const wf = await newWorkflow();
    const trigger = await newTrigger(wf, { respond: 'result', input_mapping: { title: '/t', author: '/a' } });
    const reply = await hook(trigger.url, '{"t": "result title", "a": "me"}');
    assert.equal(reply.status, 200, reply.body.toString());
    assert.deepEqual(json(reply).out, { title: 'result title', author: 'me' });
    const runs = await runsOf(wf, trigger.id);
    assert.equal(runs.length, 1);
    assert.equal((await api.get(`/run/${runs[0]?.id}/`)).body.status, 'COMPLETED');
  });

  it('maps form-encoded fields, and names the field a pointer finds nothing for (422, no run)', async () => {
    const wf = await newWorkflow();
    const trigger = await newTrigger(wf, { input_mapping: { title: '/title', author: '/who~1am' } });
    const form = new URLSearchParams({ title: 'from a form', 'who/am': 'i & you' }).toString();
    const reply = await hook(trigger.url, form, { 'content-type': 'application/x-www-form-urlencoded' });
    assert.equal(reply.status, 202, reply.body.toString());
    const run = await waitForRun(api, json(reply).run_id as string);
    assert.deepEqual((await api.get(`/run/${run.id}/`)).body.initial_inputs, {
      in: { title: 'from a form', author: 'i & you' },
    });
    const missing = await hook(trigger.url, '{"title": "no author"}');
    assert.equal(missing.status, 422, missing.body.toString());
    const detail = json(missing).detail as { loc: unknown[]; msg: string }[];
    assert.deepEqual(detail[0]?.loc, ['body', 'who/am']);
    assert.match(detail[0]?.msg ?? '', /input field 'author'/);
    const text = await hook(trigger.url, 'title=x', { 'content-type': 'text/plain' });
    assert.equal(text.status, 415);
    assert.equal((await runsOf(wf, trigger.id)).length, 1);
    // A mapping to a field the InputNode lacks is named too.
    const wrong = await newTrigger(wf, { input_mapping: { nope: '/title' } });
    const unfit = await hook(wrong.url, '{"title": "t"}');
    assert.equal(unfit.status, 422);
    assert.match(JSON.stringify(json(unfit)), /input field 'nope'/);
    assert.equal((await runsOf(wf, wrong.id)).length, 0);
  });

  it('refuses a form of more than 1000 fields, such as 40 000 repeats of one name (413, no run); a thousand repeats are one field of a thousand values', async () => {
    const wf = await newWorkflow();
    const trigger = await newTrigger(wf, {});
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    const repeats = await hook(trigger.url, 'a&'.repeat(40_000), form);
    assert.equal(repeats.status, 413, repeats.body.toString());
    assert.match(json(repeats).detail, /at most 1000 fields/);
    assert.equal((await runsOf(wf, trigger.id)).length, 0, 'no run started');
    const thousand = await hook(trigger.url, Array.from({ length: 1000 }, (_, i) => `a=${i}`).join('&'), form);
    assert.equal(thousand.status, 202, thousand.body.toString());
    const run = await waitForRun(api, json(thousand).run_id as string);
    const given = (await api.get(`/run/${run.id}/`)).body.initial_inputs.in.title as { a: string[] };
    assert.equal(given.a.length, 1000);
  });

  it("deletes a workflow's triggers with it: the hook answers 404", async () => {
    const wf = await newWorkflow();
    const trigger = await newTrigger(wf, {});
    assert.equal((await hook(trigger.url, '{"title": "before"}')).status, 202);
    assert.equal((await api.delete(`/wf/${wf}/`)).status, 204);
    assert.equal((await hook(trigger.url, '{"title": "after"}')).status, 404);
    assert.equal((await api.get(`/triggers/${trigger.id}/`)).status, 404);
    assert.equal(await engine.api.models.WebhookTrigger.countDocuments({ workflow_id: wf }), 0);
  });

  it("calls back a run it started: run.completed with the run's id, signed with the trigger's callback secret, which no answer shows", async () => {
    const wf = await newWorkflow();
    const path = '/hooks/trigger-callback';
    const trigger = await newTrigger(wf, {
      input_mapping: { title: '/t', author: '/a' },
      callback: { url: `${receiver.url}${path}`, secret: CALLBACK_SECRET },
    });
    assert.deepEqual(trigger.callback, {
      url: `${receiver.url}${path}`,
      events: ['run.completed', 'run.failed', 'run.canceled'],
    });
    const reply = await hook(trigger.url, '{"t": "called back", "a": "me"}');
    assert.equal(reply.status, 202, reply.body.toString());
    const runId = json(reply).run_id as string;
    const [hit] = await receiver.waitFor(path, 1);
    assert.ok(hit);
    assert.equal(hit.headers['x-spur-event'], 'run.completed');
    assert.equal(hit.headers['x-spur-event-id'], `${runId}:run.completed:1`);
    assert.ok(validSignature(CALLBACK_SECRET, hit), 'signed with the callback secret');
    assert.equal(hit.body.run.id, runId);
    assert.deepEqual(hit.body.run.trigger, {
      kind: 'webhook',
      id: trigger.id,
      scheduled_time: null,
      delivery_id: null,
    });
    assert.deepEqual(hit.body.run.outputs.out, { title: 'called back', author: 'me' });
    const answers = [
      await api.get(`/triggers/${trigger.id}/`),
      await api.get(`/wf/${wf}/triggers/`),
      await api.put(`/triggers/${trigger.id}/`, { name: 'renamed' }),
    ];
    for (const a of answers) {
      assert.equal(a.status, 200, a.text);
      assert.ok(!a.text.includes(CALLBACK_SECRET), a.text);
    }
    // The PUT left the callback out: kept. Nor is its secret stored in the clear.
    assert.equal(answers[2]?.body.callback.url, `${receiver.url}${path}`);
    const stored = await engine.api.models.WebhookTrigger.findById(trigger.id).lean();
    assert.ok(!JSON.stringify(stored).includes(CALLBACK_SECRET));
    const removed = await api.put(`/triggers/${trigger.id}/`, { name: 'renamed', callback: null });
    assert.equal(removed.body.callback, null);
  });

  it("streams a webhook-started run's events: its nodes' task events, then run.completed", async () => {
    const wf = await newWorkflow();
    const trigger = await newTrigger(wf, { input_mapping: { title: '/t', author: '/a' } });
    const reply = await hook(trigger.url, '{"t": "streamed", "a": "me"}');
    assert.equal(reply.status, 202, reply.body.toString());
    const runId = json(reply).run_id as string;
    const stream = await openSse(`${engine.api.baseUrl}/run/${runId}/events/`, { authorization: `Bearer ${KEY}` });
    assert.equal(stream.status, 200, stream.body());
    assert.equal(await stream.ended, true, 'the server ended the stream after the final event');
    const events = stream.events;
    for (const node of ['in', 'out'])
      assert.ok(
        events.some((e) => e.event === 'task.completed' && e.data.node_id === node),
        `task.completed of ${node}: ${events.map((e) => e.event).join(',')}`,
      );
    assert.equal(events.at(-1)?.event, 'run.completed');
  });

  it('describes every trigger route in the OpenAPI document', async () => {
    const doc = (await api.get('/openapi.json')).body as { paths: Record<string, Record<string, unknown>> };
    for (const [path, method] of [
      ['/wf/{workflow_id}/triggers/', 'post'],
      ['/wf/{workflow_id}/triggers/', 'get'],
      ['/triggers/{trigger_id}/', 'get'],
      ['/triggers/{trigger_id}/', 'put'],
      ['/triggers/{trigger_id}/', 'delete'],
      ['/triggers/{trigger_id}/rotate/', 'post'],
      ['/hooks/{token}', 'post'],
    ] as const)
      assert.ok(doc.paths[path]?.[method], `${method} ${path}`);
    const hookOp = doc.paths['/hooks/{token}']?.post as {
      requestBody: { content: Record<string, unknown> };
      responses: Record<string, { description: string }>;
    };
    assert.deepEqual(Object.keys(hookOp.requestBody.content).sort(), [
      'application/json',
      'application/x-www-form-urlencoded',
    ]);
    for (const status of ['200', '202', '401', '404', '409', '413', '415', '422', '429'])
      assert.ok(hookOp.responses[status], `the hook documents its ${status} answer`);
    assert.match(hookOp.responses['200']?.description ?? '', /respond: result/);
    // 202: `{run_id}`, a respond: result run still going past the wait, or held while the workflow is paused.
    type Schema = { $ref?: string; oneOf?: Schema[]; anyOf?: Schema[]; properties?: Record<string, unknown> };
    const schemas = (doc as unknown as { components: { schemas: Record<string, Schema> } }).components.schemas;
    const resolve = (s: Schema): Schema => (s.$ref ? resolve(schemas[s.$ref.split('/').pop() ?? ''] ?? {}) : s);
    const accepted = (hookOp.responses['202'] as unknown as { content: Record<string, { schema: Schema }> }).content[
      'application/json'
    ]?.schema;
    const top = resolve(accepted ?? {});
    const shapes = (top.oneOf ?? top.anyOf ?? [top]).map((s) => Object.keys(resolve(s).properties ?? {}).sort());
    assert.deepEqual(shapes, [['run_id'], ['detail', 'run_id', 'status'], ['detail', 'held']]);
    // The signature's scheme and tolerance, the secret's least length.
    type Props = Record<string, { enum?: string[]; maximum?: number; description?: string }>;
    const signature = schemas.WebhookSignature as unknown as { properties: Props };
    assert.deepEqual(signature.properties.scheme?.enum, ['hmac', 'stripe']);
    assert.match(signature.properties.scheme?.description ?? '', /t=<unix seconds>,v1=/);
    assert.equal(signature.properties.tolerance_seconds?.maximum, 3600);
    assert.match(signature.properties.tolerance_seconds?.description ?? '', /default 300/);
    const request = schemas.TriggerRequest as unknown as { properties: Props; additionalProperties?: boolean };
    assert.match(request.properties.secret?.description ?? '', /at least 16 bytes/);
    assert.equal(request.additionalProperties, false, 'unknown fields are refused');
  });
});

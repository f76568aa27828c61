import assert from 'node:assert/strict';
import { startApi } from '../support/api';
import { type Engine, startEngine } from '../support/engine';
import { type FakeHttpApi, startFakeHttpApi } from '../support/fake-http-api';
import { client } from '../support/http';
import { replayedEvents, runHttpNode } from '../support/http-request-runs';
import { setEnv } from '../support/integration-runs';

// HTTPRequestNode against a real local API: credentials named in headers, statuses, retries,
// the outbound cap and response parsing, and the save-time refusal of inline secrets.

const KEY = 'http-key-entered-for-the-fake-api-0001';
const CAP = 64 * 1024;
const bearer = { Authorization: { variable: 'HTTP_API_KEY', prefix: 'Bearer ' } };

describe('e2e: HTTPRequestNode', function () {
  this.timeout(120_000);
  let engine: Engine;
  let api: FakeHttpApi;

  before(async () => {
    engine = await startEngine({ SPUR_OUTBOUND_ALLOW_PRIVATE: 'true', SPUR_OUTBOUND_MAX_RESPONSE_BYTES: String(CAP) });
    api = await startFakeHttpApi();
    await setEnv(engine, { HTTP_API_BASE: `${api.url}/v1`, HTTP_API_KEY: KEY });
  });
  after(async () => {
    await engine?.close();
    await api?.close();
  });

  it('GETs and POSTs with a stored credential header: the API sees the key, and the outputs, errors, run record and event stream never hold it', async () => {
    // The API echoes the key back: the node's output must not carry it on.
    api.script('/v1/items/a', { status: 200, body: { id: 'a', you_sent: `Bearer ${KEY}` } });
    const get = await runHttpNode(engine, {
      method: 'GET',
      url: `${api.url}/v1/items/{{ in.x }}`,
      query: { q: 'find {{ in.x }}&more' },
      headers: { ...bearer, 'X-Trace': 'trace-{{ in.x }}' },
    });
    assert.equal(get.task.status, 'COMPLETED', get.task.error ?? '');
    const sent = api.seen.at(-1);
    assert.equal(sent?.method, 'GET');
    assert.equal(sent?.url, '/v1/items/a?q=find+a%26more');
    assert.equal(sent?.headers.authorization, `Bearer ${KEY}`);
    assert.equal(sent?.headers['x-trace'], 'trace-a');
    assert.equal(get.output.status, 200);
    assert.deepEqual(get.output.json, { id: 'a', you_sent: 'Bearer [credential]' });
    assert.match(get.output.headers['content-type'], /application\/json/);

    const post = await runHttpNode(engine, {
      method: 'POST',
      url: `${api.url}/v1/items`,
      headers: bearer,
      body: '{"name": {{ in.x | tojson }}}',
    });
    assert.equal(post.task.status, 'COMPLETED', post.task.error ?? '');
    const posted = api.seen.at(-1);
    assert.equal(posted?.method, 'POST');
    assert.equal(posted?.headers.authorization, `Bearer ${KEY}`);
    assert.equal(posted?.headers['content-type'], 'application/json');
    assert.deepEqual(JSON.parse(posted?.body ?? ''), { name: 'a' });
    assert.deepEqual(post.output.json, { method: 'POST', url: '/v1/items', body: '{"name": "a"}' });

    // A failure whose error page echoes the key.
    api.script('/v1/fail', { status: 400, body: `bad token Bearer ${KEY}` });
    const failed = await runHttpNode(engine, { url: `${api.url}/v1/fail`, headers: bearer });
    assert.equal(failed.task.status, 'FAILED');
    assert.match(failed.task.error ?? '', /HTTP 400 .*bad token Bearer \[credential\]/);

    for (const run of [get, post, failed]) {
      const record = await engine.http.get(`/run/${run.record.id}/`);
      assert.equal(record.status, 200);
      assert.ok(!JSON.stringify(record.body).includes(KEY), 'the run record holds no key');
      assert.ok(!(await replayedEvents(engine, run.record.id)).includes(KEY), 'the event stream holds no key');
    }
  });

  it('a 404 fails the node at once with the status and the start of the body; with accept_status [404] it is the answer', async () => {
    api.script('/v1/missing', { status: 404, body: 'no such item: missing' }, { status: 404, body: 'no such item' });
    const before = api.seen.length;
    const failed = await runHttpNode(engine, { url: `${api.url}/v1/missing` });
    assert.equal(api.seen.length - before, 1, 'a 404 is not retried');
    assert.equal(failed.record.status, 'FAILED');
    assert.equal(failed.task.status, 'FAILED');
    assert.match(
      failed.task.error ?? '',
      /HTTP 404 from GET http:\/\/127\.0\.0\.1:\d+\/v1\/missing: no such item: missing/,
    );

    const accepted = await runHttpNode(engine, { url: `${api.url}/v1/missing`, accept_status: [404] });
    assert.equal(accepted.task.status, 'COMPLETED', accepted.task.error ?? '');
    assert.equal(accepted.output.status, 404);
    assert.equal(accepted.output.body, 'no such item');
  });

  it('a 503 is retried and the 200 after it is the output; 503s past max_retries fail after exactly max_retries + 1 tries', async () => {
    api.script('/v1/flaky', { status: 503, body: 'busy' }, { status: 200, body: { ok: true } });
    const before = api.seen.length;
    const run = await runHttpNode(engine, { url: `${api.url}/v1/flaky` });
    assert.equal(run.task.status, 'COMPLETED', run.task.error ?? '');
    assert.deepEqual(run.output.json, { ok: true });
    assert.equal(api.seen.length - before, 2);
    // The run's task is the attempt that answered; the one before is listed, failed, before it.
    const [first, ...more] = run.task.failed_attempts as Array<Record<string, string | number>>;
    assert.deepEqual(more, []);
    assert.equal(first?.attempt, 1);
    assert.match(String(first?.error), /HTTP 503 .*busy/);
    const at = (t: unknown) => Date.parse(`${String(t)}${/[zZ]|[+-]\d\d:\d\d$/.test(String(t)) ? '' : 'Z'}`);
    assert.ok(at(first?.start_time) <= at(first?.end_time), JSON.stringify(first));
    assert.ok(at(first?.end_time) <= at(run.task.start_time), `${JSON.stringify(first)} before ${run.task.start_time}`);

    api.script('/v1/down', ...Array.from({ length: 5 }, () => ({ status: 503, body: 'down for maintenance' })));
    const start = api.seen.length;
    const down = await runHttpNode(engine, { url: `${api.url}/v1/down`, max_retries: 1 });
    assert.equal(down.task.status, 'FAILED');
    assert.match(down.task.error ?? '', /HTTP 503 .*down for maintenance/);
    assert.equal(api.seen.length - start, 2, 'one try and one retry');
    assert.deepEqual(
      (down.task.failed_attempts as Array<{ attempt: number; error: string }>).map((a) => [
        a.attempt,
        /HTTP 503 .*down for maintenance/.test(a.error),
      ]),
      [
        [1, true],
        [2, true],
      ],
    );
  });

  it("a 429's Retry-After is waited before the next try, by the API's own clock", async () => {
    api.script('/v1/limited', { status: 429, headers: { 'retry-after': '3' }, body: 'slow down' });
    const before = api.seen.length;
    const run = await runHttpNode(engine, { url: `${api.url}/v1/limited` });
    assert.equal(run.task.status, 'COMPLETED', run.task.error ?? '');
    const [first, second] = api.seen.slice(before);
    assert.ok(first && second, 'two tries');
    assert.ok(second.at - first.at >= 3000, `the retry came ${second.at - first.at} ms after the 429`);
  });

  it('an answer over SPUR_OUTBOUND_MAX_RESPONSE_BYTES fails the node naming the cap, without a retry', async () => {
    api.script('/v1/huge', { status: 200, body: 'x'.repeat(CAP + 1024) });
    const before = api.seen.length;
    const run = await runHttpNode(engine, { url: `${api.url}/v1/huge` });
    assert.equal(run.task.status, 'FAILED');
    assert.match(run.task.error ?? '', /exceeded 65536 bytes \(SPUR_OUTBOUND_MAX_RESPONSE_BYTES\)/);
    assert.equal(api.seen.length - before, 1);
  });

  it('response "auto" parses JSON by its content type, "text" keeps it text, "json" fails on an answer that is not JSON', async () => {
    api.script('/v1/doc', { status: 200, body: { a: 1 } }, { status: 200, body: { a: 1 } });
    const auto = await runHttpNode(engine, { url: `${api.url}/v1/doc` });
    assert.deepEqual(auto.output.json, { a: 1 });
    const text = await runHttpNode(engine, { url: `${api.url}/v1/doc`, response: 'text' });
    assert.equal(text.output.json, null);
    assert.equal(text.output.body, '{"a":1}');

    api.script('/v1/plain', { status: 200, body: '{"looks": "json"}' }, { status: 200, body: 'not json' });
    const plain = await runHttpNode(engine, { url: `${api.url}/v1/plain` });
    assert.equal(plain.output.json, null, 'text/plain is not parsed by auto');
    const strict = await runHttpNode(engine, { url: `${api.url}/v1/plain`, response: 'json' });
    assert.equal(strict.task.status, 'FAILED');
    assert.match(strict.task.error ?? '', /response is "json" but the answer is not JSON .*not json/);
  });

  it('saving an inline secret-looking header value is a 422 naming the header, and nothing is saved', async () => {
    const listed = async () => (await engine.http.get('/wf/?page_size=100')).body.length as number;
    const count = await listed();
    for (const [name, value] of [
      ['Authorization', 'Bearer sk-proj-abcdefghijklmnop1234'],
      ['Authorization', 'Basic dXNlcjpwYXNzd29yZDEyMw=='],
      ['X-Api-Key', '3f9c2e71a8b44d0c9e5f'],
      ['X-Anything', 'ghp_0123456789abcdefghijABCDEFGHIJ'],
    ] as const) {
      const definition = {
        nodes: [
          {
            id: 'node',
            title: 'node',
            node_type: 'HTTPRequestNode',
            config: { url: 'https://api.example.com/', headers: { [name]: value } },
          },
        ],
        links: [],
      };
      const res = await engine.http.post('/wf/', { name: `inline-${Math.random()}`, definition });
      assert.equal(res.status, 422, `${name}: ${value}`);
      const text = JSON.stringify(res.body);
      assert.match(text, new RegExp(`headers\\W+${name}`), 'names the header');
      assert.match(text, /looks like an inline secret/);
    }
    assert.equal(await listed(), count, 'nothing was saved');

    // Templates and named credentials are not secrets, nor is an ordinary header.
    const fine = {
      nodes: [
        {
          id: 'node',
          title: 'node',
          node_type: 'HTTPRequestNode',
          config: {
            url: 'https://api.example.com/',
            headers: {
              Authorization: 'Bearer {{ in.token }}',
              'X-Api-Key': bearer.Authorization,
              Accept: 'application/json',
            },
          },
        },
      ],
      links: [],
    };
    assert.equal((await engine.http.post('/wf/', { name: `fine-${Math.random()}`, definition: fine })).status, 200);
  });

  it('is listed by GET /node/supported_types/ under Integrations with its config fields and output', async () => {
    const listing = (await engine.http.get('/node/supported_types/')).body;
    const entry = listing.Integrations.find((t: { name: string }) => t.name === 'HTTPRequestNode');
    assert.ok(entry, 'listed');
    assert.equal(entry.config.title, 'HTTP Request');
    for (const field of [
      'method',
      'url',
      'query',
      'headers',
      'body',
      'timeout_seconds',
      'max_retries',
      'accept_status',
      'response',
    ])
      assert.ok(field in entry.config.properties, field);
    assert.deepEqual(Object.keys(entry.output.properties), ['status', 'headers', 'body', 'json']);
    assert.equal(entry.has_fixed_output, true);
  });

  it("failed attempts recorded without a mark on their run (an earlier version's) show once an api starts on the database: it marks their runs in the background", async () => {
    api.script('/v1/ok', { status: 200, body: { ok: true } });
    const run = await runHttpNode(engine, { url: `${api.url}/v1/ok` });
    assert.equal(run.task.status, 'COMPLETED', run.task.error ?? '');
    assert.deepEqual(run.task.failed_attempts, []);
    // As a worker of the version before marks recorded it: the attempt alone.
    await engine.api.models.NodeAttempt.create({
      _id: `${run.record.id}/node/1`,
      run_id: run.record.id,
      node_id: 'node',
      attempt: 1,
      start_time: null,
      end_time: new Date().toISOString(),
      error: 'The worker running it was lost',
    });
    const attemptsOf = async (http: ReturnType<typeof client>) => {
      const res = await http.get(`/run/${run.record.id}/`);
      assert.equal(res.status, 200);
      return (
        res.body.tasks as Array<{
          node_id: string;
          failed_attempts: Array<{ attempt: number; error: string; start_time: string | null }>;
        }>
      ).find((t) => t.node_id === 'node')?.failed_attempts;
    };
    assert.deepEqual(await attemptsOf(engine.http), [], 'unmarked, its run reads none');

    // A second api on the same database and queue, as a restart or an upgrade starts one.
    const restarted = await startApi(engine.api.env);
    try {
      await restarted.marked;
      const shown = await attemptsOf(client(restarted.baseUrl));
      assert.deepEqual(
        shown?.map((a) => [a.attempt, a.error, a.start_time]),
        [[1, 'The worker running it was lost', null]],
      );
      assert.deepEqual(await attemptsOf(engine.http), shown, 'every process reads it once its run is marked');
    } finally {
      await restarted.close();
    }
  });
});

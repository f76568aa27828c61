import assert from 'node:assert/strict';
import { startApi, type TestApi } from '../support/api';
import { client } from '../support/http';

describe('api: health, routing and error envelopes', () => {
  let api: TestApi;
  let http: ReturnType<typeof client>;
  before(async () => {
    api = await startApi();
    http = client(api.baseUrl);
  });
  after(() => api.close());

  it('reports MongoDB and Temporal healthy', async () => {
    const res = await http.get('/health');
    assert.equal(res.status, 200);
    assert.equal(res.body.status, 'ok');
    assert.equal(res.body.checks.mongodb.ok, true);
    assert.equal(res.body.checks.temporal.ok, true);
  });

  it('answers 503 naming the dependency that is down', async () => {
    const broken = await startApi({ SPUR_TEMPORAL_ADDRESS: '127.0.0.1:1' });
    try {
      const res = await client(broken.baseUrl).get('/health');
      assert.equal(res.status, 503);
      assert.equal(res.body.status, 'degraded');
      assert.equal(res.body.checks.temporal.ok, false);
      assert.equal(res.body.checks.mongodb.ok, true);
    } finally {
      await broken.close();
    }
  });

  it('answers unknown routes with a JSON 404', async () => {
    const res = await http.get('/no/such/route/');
    assert.equal(res.status, 404);
    assert.deepEqual(res.body, { detail: 'Not Found' });
  });

  it('answers a wrong method with a JSON 405', async () => {
    const res = await http.request('PATCH', '/wf/');
    assert.equal(res.status, 405);
    assert.deepEqual(res.body, { detail: 'Method Not Allowed' });
  });

  it('redirects a path that differs only by its trailing slash (307, as FastAPI)', async () => {
    const res = await http.get('/wf?page=2');
    assert.equal(res.status, 307);
    assert.equal(res.headers.get('location'), '/api/wf/?page=2');
  });

  it('turns malformed JSON into a 422 json_invalid item with the offset', async () => {
    const res = await http.post('/wf/', { raw: '{"name": }' });
    assert.equal(res.status, 422);
    assert.equal(res.body.detail[0].type, 'json_invalid');
    assert.equal(res.body.detail[0].loc[0], 'body');
    assert.equal(typeof res.body.detail[0].loc[1], 'number');
    assert.equal(res.body.detail[0].msg, 'JSON decode error');
  });

  it('refuses JSON nested deeper than 256 levels with 422 (it used to overflow the stack: 500)', async () => {
    const head = '{"name":"n","definition":';
    const deep = (n: number) => `${head}${'['.repeat(n)}${']'.repeat(n)}}`;
    const res = await http.post('/wf/', { raw: deep(20_000) });
    assert.equal(res.status, 422);
    assert.deepEqual(res.body.detail, [
      {
        type: 'json_invalid',
        loc: ['body', head.length + 255],
        msg: 'JSON decode error',
        input: {},
        ctx: { error: 'Nesting deeper than 256 levels' },
      },
    ]);
    // A bare array this deep failed while echoing it back as the 422's `input`.
    assert.equal((await http.post('/wf/X/start_run/', { raw: '['.repeat(5_000) + ']'.repeat(5_000) })).status, 422);
    // Brackets inside strings are text, and 256 levels are still parsed (and then validated).
    const inString = await http.post('/wf/', { raw: JSON.stringify({ name: '['.repeat(10_000), definition: 'x' }) });
    assert.ok(
      inString.body.detail.some((d: { type: string }) => d.type === 'string_too_long'),
      inString.text.slice(0, 300),
    );
    assert.notEqual((await http.post('/wf/', { raw: deep(255) })).body.detail[0].type, 'json_invalid');
  });

  it('reports a missing body as loc ["body"]', async () => {
    const res = await http.post('/wf/');
    assert.equal(res.status, 422);
    assert.deepEqual(res.body.detail, [{ type: 'missing', loc: ['body'], msg: 'Field required', input: null }]);
  });

  it('refuses a JSON body over the limit with 413 while streaming', async () => {
    const small = await startApi({ SPUR_MAX_JSON_BYTES: '1024' });
    try {
      const res = await client(small.baseUrl).post('/wf/', { name: 'x', description: 'y'.repeat(5000) });
      assert.equal(res.status, 413);
      assert.match(res.body.detail, /exceeds 1024 bytes/);
    } finally {
      await small.close();
    }
  });

  it('answers 413, not 500, for a body under the JSON limit whose record MongoDB cannot store (over 16 MiB); the api goes on', async () => {
    const note = 'x'.repeat(17 * 1024 * 1024);
    const definition = {
      nodes: [
        {
          id: 'input_node',
          title: 'input_node',
          node_type: 'InputNode',
          config: { output_schema: { a: 'string' }, note },
        },
      ],
      links: [],
    };
    const res = await http.post('/wf/', { name: 'Too large to store', definition });
    assert.equal(res.status, 413, res.text.slice(0, 300));
    assert.match(res.body.detail, /16 MiB per document/);
    assert.equal((await http.post('/wf/', { name: 'Small after' })).status, 200);
    const names = (await http.get('/wf/')).body.map((w: { name: string }) => w.name);
    assert.ok(names.includes('Small after') && !names.includes('Too large to store'), JSON.stringify(names));
  });
});

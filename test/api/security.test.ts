import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import { REPO_ROOT } from '../../scripts/lib/tools';
import { trusted } from 'mongoose';
import { hashApiKey } from '../../src/http/api-keys';
import { startApi, type TestApi } from '../support/api';
import { client } from '../support/http';
import { stack } from '../support/stack';

describe('api: API keys, CORS, listen guard, NoSQL injection', () => {
  describe('with API keys configured', () => {
    let api: TestApi;
    const key = 'spur_test_key_0123456789';
    before(async () => {
      api = await startApi({ SPUR_API_KEY_HASHES: `${hashApiKey('another-key')},${hashApiKey(key)}` });
    });
    after(() => api.close());

    it('answers 401 JSON without a key or with a wrong one; health stays open', async () => {
      const http = client(api.baseUrl);
      const none = await http.get('/wf/');
      assert.equal(none.status, 401);
      assert.deepEqual(none.body, { detail: 'Not authenticated' });
      assert.equal(none.headers.get('www-authenticate'), 'Bearer');
      const wrong = await http.request('GET', '/wf/', undefined, { authorization: 'Bearer nope' });
      assert.equal(wrong.status, 401);
      assert.deepEqual(wrong.body, { detail: 'Invalid API key' });
      assert.equal((await http.request('GET', '/wf/', undefined, { 'x-api-key': `${key}x` })).status, 401);
      assert.equal((await http.get('/health')).status, 200);
      assert.equal((await http.get('/health/')).status, 200, 'with the trailing slash too (compose probes that)');
      assert.equal((await http.get('/openapi.json')).status, 401);
    });

    it('accepts the key as a Bearer token or in X-API-Key', async () => {
      const http = client(api.baseUrl);
      assert.equal((await http.request('GET', '/wf/', undefined, { authorization: `Bearer ${key}` })).status, 200);
      assert.equal((await http.request('GET', '/wf/', undefined, { 'x-api-key': key })).status, 200);
      assert.equal((await http.request('GET', '/wf/', undefined, { 'x-api-key': 'another-key' })).status, 200);
    });
  });

  describe('CORS', () => {
    let api: TestApi;
    let strict: TestApi;
    before(async () => {
      api = await startApi();
      strict = await startApi({ SPUR_CORS_ORIGINS: 'https://app.example.com' });
    });
    after(async () => {
      await api.close();
      await strict.close();
    });

    it('allows local development origins by default, never *', async () => {
      const res = await client(api.baseUrl).request('GET', '/wf/', undefined, { origin: 'http://localhost:3000' });
      assert.equal(res.headers.get('access-control-allow-origin'), 'http://localhost:3000');
      assert.equal(res.headers.get('access-control-allow-credentials'), 'true');
      const foreign = await client(api.baseUrl).request('GET', '/wf/', undefined, { origin: 'https://evil.example' });
      assert.equal(foreign.headers.get('access-control-allow-origin'), null);
    });

    it('allows exactly the configured origins', async () => {
      const http = client(strict.baseUrl);
      const ok = await http.request('OPTIONS', '/wf/', undefined, {
        origin: 'https://app.example.com',
        'access-control-request-method': 'POST',
      });
      assert.equal(ok.headers.get('access-control-allow-origin'), 'https://app.example.com');
      const local = await http.request('GET', '/wf/', undefined, { origin: 'http://localhost:3000' });
      assert.equal(local.headers.get('access-control-allow-origin'), null);
    });
  });

  it('refuses to listen on a non-loopback address without keys unless told to', function () {
    // tsx compiles the entry point first: seconds on a loaded machine.
    this.timeout(90_000);
    const result = spawnSync(
      process.execPath,
      [require.resolve('tsx/cli'), path.join(REPO_ROOT, 'src', 'processes', 'api.ts')],
      {
        env: {
          PATH: process.env.PATH,
          SPUR_HOST: '0.0.0.0',
          SPUR_PORT: '0',
          SPUR_MONGODB_URI: 'mongodb://127.0.0.1:1/',
        },
        encoding: 'utf8',
        timeout: 80_000,
      },
    );
    assert.equal(result.status, 2);
    assert.match(result.stderr, /Refusing to listen on 0\.0\.0\.0 without sign-in/);
    assert.equal(result.stderr.trim().split('\n').length, 1, 'says so in one line');
  });

  it('listens on a non-loopback address without keys when SPUR_ALLOW_INSECURE=true', async function () {
    this.timeout(90_000);
    // Its own process group: tsx starts node as a child, and the whole group must go at the end.
    const child = spawn(
      process.execPath,
      [require.resolve('tsx/cli'), path.join(REPO_ROOT, 'src', 'processes', 'api.ts')],
      {
        env: {
          PATH: process.env.PATH,
          SPUR_HOST: '0.0.0.0',
          SPUR_PORT: '0',
          SPUR_ALLOW_INSECURE: 'true',
          SPUR_MONGODB_URI: stack.mongoUri,
          SPUR_MONGODB_DB: 'spur_insecure_probe',
          SPUR_TEMPORAL_ADDRESS: stack.temporalAddress,
          SPUR_SECRET_KEY: Buffer.alloc(32, 7).toString('base64'),
        },
        detached: true,
      },
    );
    try {
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      const deadline = Date.now() + 80_000;
      while (!out.includes('api listening') && Date.now() < deadline && child.exitCode === null)
        await new Promise((r) => setTimeout(r, 100));
      assert.match(out, /api listening/);
    } finally {
      if (child.pid) process.kill(-child.pid, 'SIGKILL');
    }
  });

  describe('NoSQL operator injection', () => {
    let api: TestApi;
    const runIds: string[] = [];
    before(async () => {
      api = await startApi();
      const http = client(api.baseUrl);
      const definition = {
        nodes: [{ id: 'in', title: 'in', node_type: 'InputNode', config: { output_schema: { x: 'string' } } }],
        links: [],
      };
      const wf = (await http.post('/wf/', { name: 'victim', definition })).body;
      await http.post('/env-mgmt/', { name: 'OPENAI_API_KEY', value: 'sk-secret-value-123456' });
      // Runs an operator that got through would match (no worker: they stay PENDING).
      for (let i = 0; i < 2; i++) {
        const run = await http.post(`/wf/${wf.id}/start_run/`, { initial_inputs: { in: { x: 'a' } } });
        assert.equal(run.status, 200, run.text);
        runIds.push(run.body.id);
      }
    });
    after(() => api.close());

    it('has runs that an operator reaching the database would match (the control)', async () => {
      assert.equal(await api.models.Run.countDocuments({ run_type: trusted({ $ne: null }) }), runIds.length);
      assert.equal(await api.models.Run.countDocuments({ _id: trusted({ $ne: null }) }), runIds.length);
      const listed = await client(api.baseUrl).get('/run/?run_type=interactive');
      assert.deepEqual(listed.body.map((r: { id: string }) => r.id).sort(), [...runIds].sort());
    });

    const payloads = [
      '{"$ne":null}',
      '{"$gt":""}',
      '{"$where":"1"}',
      '{"$regex":".*"}',
      '[$ne]=1',
      '%7B%22%24ne%22%3Anull%7D',
    ];

    it('treats operators in path segments as plain ids: 404, never another document', async () => {
      const http = client(api.baseUrl);
      for (const p of payloads) {
        const seg = encodeURIComponent(p);
        for (const route of [
          `/wf/${seg}/`,
          `/run/${seg}/`,
          `/run/${seg}/status/`,
          `/wf/pause_history/${seg}/`,
          `/env-mgmt/${seg}`,
          `/wf/${seg}/versions/`,
        ]) {
          const res = await http.get(route);
          assert.ok([404, 422].includes(res.status), `${route} → ${res.status}`);
          assert.ok(
            !res.text.includes('victim') &&
              !res.text.includes('sk-s') &&
              !runIds.some((id) => res.text.includes(`"${id}"`)),
            route,
          );
        }
      }
    });

    it('rejects operator objects in bodies with 422 and in queries as plain strings', async () => {
      const http = client(api.baseUrl);
      for (const op of [{ $ne: null }, { $gt: '' }, { $where: 'sleep(1000)' }, { $regex: '.*' }]) {
        const created = await http.post('/wf/', { name: op });
        assert.equal(created.status, 422);
        const env = await http.post('/env-mgmt/', { name: op, value: 'x' });
        assert.equal(env.status, 422);
        const action = await http.post(`/wf/process_pause_action/${runIds[0]}/`, {
          action: 'APPROVE',
          user_id: op,
          inputs: {},
        });
        assert.equal(action.status, 422);
      }
      // An operator as a value is a string that no run has: nothing matches (an operator would match every run).
      const wfId = (await http.get(`/run/${runIds[0]}/`)).body.workflow_id;
      assert.equal(
        (await http.get(`/wf/${wfId}/runs/?status=%7B%22%24ne%22%3A1%7D`)).status,
        422,
        'status is one of the run statuses',
      );
      for (const q of [
        'run_type=%7B%22%24ne%22%3Anull%7D',
        'run_type=%7B%22%24regex%22%3A%22.*%22%7D',
        'run_type=%7B%22%24gt%22%3A%22%22%7D',
      ]) {
        const res = await http.get(`/run/?${q}`);
        assert.ok([200, 422].includes(res.status), q);
        if (res.status === 200) assert.deepEqual(res.body, [], q);
      }
      // Bracket keys are unknown parameters, ignored: every run (an operator `$ne: interactive` would match none).
      for (const q of ['run_type[$ne]=interactive', 'status[$ne]=PENDING', 'run_type[$regex]=^nothing']) {
        const res = await http.get(`/run/?${q}`);
        assert.ok([200, 422].includes(res.status), q);
        if (res.status === 200)
          assert.deepEqual(res.body.map((r: { id: string }) => r.id).sort(), [...runIds].sort(), q);
      }
    });
  });
});

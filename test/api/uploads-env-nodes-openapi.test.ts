import assert from 'node:assert/strict';
import SwaggerParser from '@apidevtools/swagger-parser';
import { startApi, type TestApi } from '../support/api';
import { client } from '../support/http';

function form(fields: Record<string, string>, files: [string, string][] = [], fileField = 'files'): FormData {
  const fd = new FormData();
  for (const [k, v] of Object.entries(fields)) fd.append(k, v);
  for (const [name, content] of files) fd.append(fileField, new Blob([content], { type: 'text/plain' }), name);
  return fd;
}

describe('api: test files, env management, node types, OpenAPI', () => {
  let api: TestApi;
  let http: ReturnType<typeof client>;
  before(async () => {
    api = await startApi({ SPUR_MAX_UPLOAD_BYTES: '4096', SPUR_MAX_UPLOAD_FILES: '3' });
    http = client(api.baseUrl);
  });
  after(() => api.close());

  describe('/wf/upload_test_files/', () => {
    it('stores files under PySpur paths, retrievable afterwards, removed with the workflow', async () => {
      const wf = (await http.post('/wf/', { name: 'With files' })).body;
      const res = await http.post(
        '/wf/upload_test_files/',
        form({ workflow_id: wf.id, node_id: 'input_node' }, [
          ['a.txt', 'alpha'],
          ['b.csv', 'x,y\n1,2'],
        ]),
      );
      assert.equal(res.status, 200);
      const paths: string[] = res.body.input_node;
      assert.equal(paths.length, 2);
      assert.match(paths[0]!, new RegExp(`^test_files/${wf.id}/\\d{8}_\\d{6}_a\\.txt$`));
      const file = await http.get(`/files/${paths[1]}`);
      assert.equal(file.status, 200);
      assert.equal(file.text, 'x,y\n1,2');
      assert.match(file.headers.get('content-disposition') ?? '', /attachment/);

      assert.equal((await http.delete(`/wf/${wf.id}/`)).status, 204);
      assert.equal((await http.get(`/files/${paths[0]}`)).status, 404);
      assert.equal(await api.mongo.collection('test_files.files').countDocuments({ 'metadata.workflow_id': wf.id }), 0);
      assert.equal(await api.mongo.collection('test_files.chunks').countDocuments(), 0);
    });

    it('keeps stored names inside their folder: directories and ".." are dropped; NUL is refused', async () => {
      const wf = (await http.post('/wf/', { name: 'Sneaky files' })).body;
      const res = await http.post(
        '/wf/upload_test_files/',
        form({ workflow_id: wf.id, node_id: 'n' }, [
          ['../../etc/passwd', 'x'],
          ['..\\..\\win.ini', 'y'],
          ['/abs/olute.txt', 'z'],
        ]),
      );
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const names = (res.body.n as string[]).map((p) => {
        assert.ok(p.startsWith(`test_files/${wf.id}/`), p);
        assert.equal(p.split('/').length, 3, p);
        return p.split('/')[2]!.replace(/^\d{8}_\d{6}_/, '');
      });
      assert.deepEqual(names, ['passwd', 'win.ini', 'olute.txt']);
      const nul = await http.post(
        '/wf/upload_test_files/',
        form({ workflow_id: wf.id, node_id: 'n' }, [['nul\u0000byte.txt', 'z']]),
      );
      assert.equal(nul.status, 400);
      assert.equal(await api.mongo.collection('test_files.files').countDocuments({ filename: { $regex: 'byte' } }), 0);
    });

    it('reads file names as UTF-8, as browsers send them (multer read Latin-1: rÃ©sumÃ©)', async () => {
      const wf = (await http.post('/wf/', { name: 'Unicode names' })).body;
      const res = await http.post(
        '/wf/upload_test_files/',
        form({ workflow_id: wf.id, node_id: 'n' }, [['résumé 📄.txt', 'x']]),
      );
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.match(res.body.n[0], /^test_files\/S\d+\/\d{8}_\d{6}_résumé 📄\.txt$/);
      assert.equal((await http.get(`/files/${res.body.n[0].split('/').map(encodeURIComponent).join('/')}`)).text, 'x');
    });

    it('answers 404 for an unknown workflow and 422 for missing parts', async () => {
      const unknown = await http.post(
        '/wf/upload_test_files/',
        form({ workflow_id: 'S404404', node_id: 'n' }, [['a.txt', 'a']]),
      );
      assert.equal(unknown.status, 404);
      assert.deepEqual(unknown.body, { detail: 'Workflow not found' });
      const noFiles = await http.post('/wf/upload_test_files/', form({ workflow_id: 'S1', node_id: 'n' }));
      assert.equal(noFiles.status, 422);
      assert.deepEqual(
        noFiles.body.detail.map((d: { loc: unknown[] }) => d.loc),
        [['body', 'files']],
      );
      assert.equal(noFiles.body.detail[0].type, 'missing');
      const noIds = await http.post('/wf/upload_test_files/', form({}, [['a.txt', 'a']]));
      assert.equal(noIds.status, 422);
      assert.deepEqual(noIds.body.detail.map((d: { loc: unknown[] }) => d.loc.join('.')).sort(), [
        'body.node_id',
        'body.workflow_id',
      ]);
      const notMultipart = await http.post('/wf/upload_test_files/', { workflow_id: 'S1' });
      assert.equal(notMultipart.status, 422);
    });

    it('refuses files over the size or count limit with 413', async () => {
      const wf = (await http.post('/wf/', { name: 'Big files' })).body;
      const big = await http.post(
        '/wf/upload_test_files/',
        form({ workflow_id: wf.id, node_id: 'n' }, [['big.bin', 'x'.repeat(5000)]]),
      );
      assert.equal(big.status, 413);
      assert.match(
        big.body.detail,
        /File too large \(field 'files'\): the limit is 4 KiB per file \(SPUR_MAX_UPLOAD_BYTES\)/,
      );
      const many = await http.post(
        '/wf/upload_test_files/',
        form({ workflow_id: wf.id, node_id: 'n' }, [
          ['1', 'a'],
          ['2', 'b'],
          ['3', 'c'],
          ['4', 'd'],
        ]),
      );
      assert.equal(many.status, 413);
      assert.match(many.body.detail, /Too many files.*: the limit is 3 per request/);
      assert.equal(await api.mongo.collection('test_files.files').countDocuments({ 'metadata.workflow_id': wf.id }), 0);
    });

    it('answers a malformed multipart body with 400, not 500', async () => {
      const res = await http.request(
        'POST',
        '/wf/upload_test_files/',
        { raw: '--x\r\nContent-Disposition: form-data; name="workflow_id"\r\n\r\nS1' },
        {
          'content-type': 'multipart/form-data; boundary=x',
        },
      );
      assert.equal(res.status, 400);
      assert.match(res.body.detail, /error parsing the body/);
    });
    it('answers unnamed parts and deeply nested or huge-index field names with 400 (found by the fuzz test)', async () => {
      const wf = (await http.post('/wf/', { name: 'Nameless parts' })).body;
      const part = (disposition: string, value = 'v') =>
        `--x\r\nContent-Disposition: ${disposition}\r\n\r\n${value}\r\n`;
      // Unnamed parts, and names multer would nest deeply or turn into a 100-million-slot array.
      const bodies = [
        part('form-data'),
        part('form-data; filename="a.txt"'),
        part('form-data; name="a[b][c][d][e][f][g]"'),
        part('form-data; name="extra[100000000]"'),
      ];
      for (const body of bodies) {
        const res = await http.request(
          'POST',
          '/wf/upload_test_files/',
          {
            raw: `${part('form-data; name="workflow_id"', wf.id)}${part('form-data; name="node_id"')}${body}--x--\r\n`,
          },
          {
            'content-type': 'multipart/form-data; boundary=x',
          },
        );
        assert.equal(res.status, 400, `${body} → ${res.text}`);
        assert.match(res.body.detail, /^There was an error parsing the body: /);
      }
      assert.equal(await api.mongo.collection('test_files.files').countDocuments({ 'metadata.workflow_id': wf.id }), 0);
    });
  });

  describe('/env-mgmt/', () => {
    it("lists PySpur's 17 providers in its order, then the integrations', and all their variable names", async () => {
      const providers = await http.get('/env-mgmt/providers');
      assert.equal(providers.status, 200);
      assert.equal(providers.body.length, 24);
      assert.deepEqual(
        providers.body.slice(0, 3).map((p: { id: string }) => p.id),
        ['openai', 'azure-openai', 'anthropic'],
      );
      assert.deepEqual(providers.body[1].parameters[1], {
        name: 'AZURE_OPENAI_ENDPOINT',
        description: 'Azure OpenAI Endpoint URL',
        required: true,
        type: 'text',
      });
      const names = await http.get('/env-mgmt/');
      assert.equal(names.body.length, 51);
      assert.equal(names.body[0], 'OPENAI_API_KEY');
      assert.equal(names.body[33], 'EXA_API_KEY');
      assert.equal(names.body[34], 'GITHUB_ACCESS_TOKEN');
    });

    it('sets, reads masked, stores encrypted and deletes', async () => {
      const secret = 'sk-live-0123456789abcdef';
      const set = await http.post('/env-mgmt/', { name: 'OPENAI_API_KEY', value: secret });
      assert.equal(set.status, 200);
      assert.deepEqual(set.body, { message: "Key 'OPENAI_API_KEY' set successfully" });
      const read = await http.get('/env-mgmt/OPENAI_API_KEY');
      assert.deepEqual(read.body, { name: 'OPENAI_API_KEY', value: `sk-l${'*'.repeat(secret.length - 8)}cdef` });

      const raw = await api.mongo.collection('env_vars').find().toArray();
      assert.equal(raw.length, 1);
      const stored = JSON.stringify(raw);
      assert.ok(
        !stored.includes(secret) && !stored.includes('0123456789'),
        'the raw document must not hold the secret',
      );

      await http.post('/env-mgmt/', { name: 'DEEPSEEK_API_KEY', value: 'short' });
      assert.equal((await http.get('/env-mgmt/DEEPSEEK_API_KEY')).body.value, '*****');
      await http.post('/env-mgmt/', { name: 'AZURE_OPENAI_ENDPOINT', value: 'https://example.invalid/' });
      assert.equal(
        (await http.get('/env-mgmt/AZURE_OPENAI_ENDPOINT')).body.value,
        'https://example.invalid/',
        'text parameters are shown in clear',
      );
      assert.deepEqual((await http.get('/env-mgmt/ANTHROPIC_API_KEY')).body, { name: 'ANTHROPIC_API_KEY', value: '' });

      const del = await http.delete('/env-mgmt/OPENAI_API_KEY');
      assert.deepEqual(del.body, { message: "Key 'OPENAI_API_KEY' deleted successfully" });
      assert.equal((await http.get('/env-mgmt/OPENAI_API_KEY')).body.value, '');
      assert.equal((await http.delete('/env-mgmt/OPENAI_API_KEY')).status, 404, 'deleting a key that is not set');
    });

    it('answers 404 Key not found when reading or deleting an unknown name, 422 when setting one, 400 for an empty value', async () => {
      for (const res of [await http.get('/env-mgmt/NOPE'), await http.delete('/env-mgmt/NOPE')]) {
        assert.equal(res.status, 404);
        assert.deepEqual(res.body, { detail: 'Key not found' });
      }
      const set = await http.post('/env-mgmt/', { name: 'NOPE', value: 'x' });
      assert.equal(set.status, 422);
      assert.deepEqual(set.body.detail[0].loc, ['body', 'name']);
      for (const body of [{ name: 'OPENAI_API_KEY', value: '' }, { name: 'OPENAI_API_KEY' }]) {
        const res = await http.post('/env-mgmt/', body);
        assert.equal(res.status, 400);
        assert.deepEqual(res.body, { detail: 'Value is required' });
      }
      assert.equal((await http.post('/env-mgmt/', { value: 'x' })).status, 422);
    });
  });

  describe('/node/supported_types/', () => {
    it("publishes 39 node types by category (PySpur's 34, with their defaults, MCPToolNode, HTTPRequestNode, SubworkflowNode, WaitNode and WaitForCallbackNode)", async () => {
      const res = await http.get('/node/supported_types/');
      assert.equal(res.status, 200);
      assert.deepEqual(Object.keys(res.body), [
        'Input/Output',
        'AI',
        'Code Execution',
        'Logic',
        'Experimental',
        'Integrations',
        'Search',
        'Tools',
      ]);
      const all = Object.values(res.body).flat() as {
        name: string;
        config: { title: string; properties: Record<string, { default?: unknown }> };
      }[];
      assert.equal(all.length, 39);
      const input = all.find((e) => e.name === 'InputNode')!;
      assert.equal(input.config.title, 'Input');
      assert.deepEqual(input.config.properties.output_schema!.default, { input_1: 'string' });
      const llm = res.body.AI.find((e: { name: string }) => e.name === 'SingleLLMCallNode');
      assert.equal(Object.keys(llm.model_constraints).length, 48);
    });
  });

  describe('OpenAPI', () => {
    it('serves a valid OpenAPI 3 document listing every route', async () => {
      const res = await http.get('/openapi.json');
      assert.equal(res.status, 200);
      await SwaggerParser.validate(structuredClone(res.body));
      const expected: Record<string, string[]> = {
        '/health': ['get'],
        '/node/supported_types/': ['get'],
        '/wf/': ['get', 'post'],
        '/wf/upload_test_files/': ['post'],
        '/wf/{workflow_id}/': ['delete', 'get', 'put'],
        '/wf/{workflow_id}/reset/': ['put'],
        '/wf/{workflow_id}/duplicate/': ['post'],
        '/wf/{workflow_id}/output_variables/': ['get'],
        '/wf/{workflow_id}/versions/': ['get'],
        '/files/test_files/{workflow_id}/{file_name}': ['get'],
        '/env-mgmt/providers': ['get'],
        '/env-mgmt/': ['get', 'post'],
        '/env-mgmt/{name}': ['delete', 'get'],
      };
      for (const [path, methods] of Object.entries(expected)) {
        assert.ok(res.body.paths[path], `missing ${path}`);
        assert.deepEqual(Object.keys(res.body.paths[path]).sort(), methods, path);
      }
      assert.deepEqual(
        res.body.paths['/wf/{workflow_id}/versions/'].get.parameters.map((p: { name: string }) => p.name).sort(),
        ['page', 'page_size', 'workflow_id'],
      );
      assert.ok(res.body.components.schemas.WorkflowDefinition);
    });

    it('serves a browsable docs page with its assets from the package', async () => {
      const page = await http.get('/docs');
      assert.equal(page.status, 200);
      assert.match(page.text, /SwaggerUIBundle/);
      const asset = await http.get('/docs/swagger-ui-bundle.js');
      assert.equal(asset.status, 200);
      assert.ok(asset.text.length > 100_000);
      assert.equal((await http.get('/docs/..%2F..%2Fpackage.json')).status, 404);
    });
  });
});

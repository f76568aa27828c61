import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { bearer, memberWithKey } from '../support/access';
import type { Engine } from '../support/engine';
import type { FakeLlmServer } from '../support/fake-llm-server';
import { l, n } from '../support/graphs';
import { client } from '../support/http';
import { startLlmEngine } from '../support/llm-engine';

const PDF = Buffer.concat([Buffer.from('%PDF-1.4\n'), randomBytes(3000)]);

const pdfReader = {
  nodes: [
    n('src', 'InputNode', { output_schema: { question: 'string', doc: 'string' } }),
    n('llm', 'SingleLLMCallNode', {
      llm_info: { model: 'openai/gpt-4o', max_tokens: 100, temperature: 0 },
      user_message: '{{src.question}}',
      url_variables: { file: 'src.doc' },
    }),
  ],
  links: [l('src', 'llm')],
};

/**
 * A run reads stored files by path (`test_files/<workflow>/<name>`), and GridFS files carry no
 * workspace: the worker must refuse another workspace's path as it refuses one of no file, or a
 * team could hand a model another team's upload.
 */
describe("e2e: a run reads no other workspace's stored file", function () {
  this.timeout(120_000);
  let engine: Engine;
  let fake: FakeLlmServer;

  before(async () => {
    ({ engine, fake } = await startLlmEngine());
  });
  after(async () => {
    await engine?.close();
    await fake?.close();
  });

  /** The API as a builder of a new workspace called `name`. */
  async function builderOfNewWorkspace(name: string) {
    const made = await engine.http.post('/access/workspaces/', { name });
    assert.equal(made.status, 201, made.text);
    const { key } = await memberWithKey(engine.http, made.body.id, `${name}-builder`, 'builder');
    return client(engine.api.baseUrl, bearer(key.key));
  }

  /** default uploads secret.pdf as a test file of the workflow; its stored path. */
  async function uploadSecret(workflowId: string): Promise<string> {
    const form = new FormData();
    form.append('workflow_id', workflowId);
    form.append('node_id', 'src');
    form.append('files', new Blob([PDF], { type: 'application/pdf' }), 'secret.pdf');
    const uploaded = await engine.http.post('/wf/upload_test_files/', form);
    assert.equal(uploaded.status, 200, uploaded.text);
    const [path] = uploaded.body.src as string[];
    assert.ok(path, uploaded.text);
    return path;
  }

  it("a path to default's test file, given to a run in another workspace, is no stored file: the node fails and no model is called", async () => {
    const holder = (await engine.http.post('/wf/', { name: 'pdf holder' })).body;
    const path = await uploadSecret(holder.id);

    const team = await builderOfNewWorkspace('team-b');

    const wf = (await team.post('/wf/', { name: 'reader', definition: pdfReader })).body;
    fake.requests.length = 0;
    const ran = await team.post(`/wf/${wf.id}/run/`, { initial_inputs: { src: { question: 'Q', doc: path } } });
    assert.equal(ran.status, 200, ran.text);
    const [record] = (await team.get(`/wf/${wf.id}/runs/`)).body;
    assert.equal(record.status, 'FAILED', JSON.stringify(record));
    assert.match(record.tasks.find((t: { node_id: string }) => t.node_id === 'llm').error, /no stored file/);
    assert.equal(fake.requests.length, 0, 'no model saw the file');

    // The control: the same run in default reads it.
    const mine = (await engine.http.post('/wf/', { name: 'reader', definition: pdfReader })).body;
    await engine.http.post(`/wf/${mine.id}/run/`, { initial_inputs: { src: { question: 'Q', doc: path } } });
    const [own] = (await engine.http.get(`/wf/${mine.id}/runs/`)).body;
    assert.equal(own.status, 'COMPLETED', own.message);
    assert.equal(fake.requests.length, 1);
  });

  it("text fields shaped as an uploaded file (files[0][gridfsId][$ne]) take no upload of another workspace's: 422, and the file stays its owner's, byte for byte", async () => {
    const holder = (await engine.http.post('/wf/', { name: 'pdf holder 2' })).body;
    const path = await uploadSecret(holder.id);

    const team = await builderOfNewWorkspace('team-c');
    const own = (await team.post('/wf/', { name: 'thief' })).body;
    const forged = new FormData();
    forged.append('workflow_id', own.id);
    forged.append('node_id', 'src');
    // multer reads bracketed names as nested objects: a staged file whose id is a query operator.
    forged.append('files[0][gridfsId][$ne]', '');
    forged.append('files[0][originalname]', 'loot.pdf');
    forged.append('files[0][mimetype]', 'application/pdf');
    forged.append('files[0][size]', '1');
    const taken = await team.post('/wf/upload_test_files/', forged);
    assert.equal(taken.status, 422, taken.text);
    const listed = await team.get(`/files/${own.id}`);
    assert.ok([200, 404].includes(listed.status), listed.text);
    assert.ok(!JSON.stringify(listed.body ?? '').includes('loot.pdf'), 'no file was taken into the thief workflow');

    const still = await fetch(`${engine.api.baseUrl}/files/${path}`);
    assert.equal(still.status, 200);
    assert.ok(
      Buffer.from(await still.arrayBuffer()).equals(PDF),
      "default's file is still under its own path, unchanged",
    );
    const mine = (await engine.http.get(`/files/${holder.id}`)).body as Array<{ name?: string; path?: string }>;
    assert.equal(JSON.stringify(mine).includes('secret.pdf'), true, JSON.stringify(mine));
  });
});

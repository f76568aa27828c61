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

  it("a path to default's test file, given to a run in another workspace, is no stored file: the node fails and no model is called", async () => {
    const holder = (await engine.http.post('/wf/', { name: 'pdf holder' })).body;
    const form = new FormData();
    form.append('workflow_id', holder.id);
    form.append('node_id', 'src');
    form.append('files', new Blob([PDF], { type: 'application/pdf' }), 'secret.pdf');
    const uploaded = await engine.http.post('/wf/upload_test_files/', form);
    assert.equal(uploaded.status, 200, uploaded.text);
    const [path] = uploaded.body.src as string[];
    assert.ok(path, uploaded.text);

    const made = await engine.http.post('/access/workspaces/', { name: 'team-b' });
    assert.equal(made.status, 201, made.text);
    const { key } = await memberWithKey(engine.http, made.body.id, 'team-b-builder', 'builder');
    const team = client(engine.api.baseUrl, bearer(key.key));

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
});

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { Engine } from '../support/engine';
import type { FakeLlmServer, RecordedRequest } from '../support/fake-llm-server';
import { l, n } from '../support/graphs';
import { startLlmEngine } from '../support/llm-engine';

const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), randomBytes(6000)]);
const PDF = Buffer.concat([Buffer.from('%PDF-1.4\n'), randomBytes(3000)]);

function visionWorkflow(model: string) {
  return {
    nodes: [
      n('src', 'InputNode', { output_schema: { question: 'string', image: 'string' } }),
      n('llm', 'SingleLLMCallNode', {
        llm_info: { model, max_tokens: 100, temperature: 0 },
        user_message: '{{src.question}}',
        url_variables: { file: 'src.image' },
      }),
    ],
    links: [l('src', 'llm')],
  };
}

/** The content parts of the last user message a provider received. */
function lastUserParts(req: RecordedRequest): { type: string; [key: string]: any }[] {
  const users = (req.body.messages as { role: string; content: unknown }[]).filter((m) => m.role === 'user');
  const content = users.at(-1)?.content;
  assert.ok(Array.isArray(content), `the user message has content parts: ${JSON.stringify(content)}`);
  return content;
}

describe('e2e: url_variables send files to the model as content parts, bytes unchanged', function () {
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
  beforeEach(() => {
    fake.requests.length = 0;
  });

  async function run(model: string, image: string) {
    const wf = (await engine.http.post('/wf/', { name: `vision-${Math.random()}`, definition: visionWorkflow(model) }))
      .body;
    const res = await engine.http.post(`/wf/${wf.id}/run/`, {
      initial_inputs: { src: { question: 'What is this?', image } },
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const [record] = (await engine.http.get(`/wf/${wf.id}/runs/`)).body;
    assert.equal(record.status, 'COMPLETED', record.message);
    assert.equal(fake.requests.length, 1);
    return { wf, record, request: fake.requests[0]! };
  }

  it('OpenAI: a data-URI input arrives as an image_url part; only a stored-file path travels through the run', async () => {
    const { record, request } = await run('openai/gpt-4o', `data:image/png;base64,${PNG.toString('base64')}`);
    assert.match(record.initial_inputs.src.image, /^run_files\//, 'the run carries a reference, not the bytes');
    const [text, image] = lastUserParts(request);
    assert.deepEqual(text, { type: 'text', text: 'What is this?' });
    assert.equal(image!.type, 'image_url');
    const match = /^data:image\/png;base64,(.+)$/.exec(image!.image_url.url);
    assert.ok(match, image!.image_url.url.slice(0, 40));
    assert.ok(Buffer.from(match[1]!, 'base64').equals(PNG), 'the same bytes');
  });

  it('Anthropic: an image block and, for an uploaded PDF test file, a document block', async () => {
    const { request } = await run(
      'anthropic/claude-3-5-haiku-latest',
      `data:image/png;base64,${PNG.toString('base64')}`,
    );
    const [, image] = lastUserParts(request);
    assert.equal(image!.type, 'image');
    assert.equal(image!.source.media_type, 'image/png');
    assert.ok(Buffer.from(image!.source.data, 'base64').equals(PNG));

    const wf = (await engine.http.post('/wf/', { name: 'pdf holder' })).body;
    const form = new FormData();
    form.append('workflow_id', wf.id);
    form.append('node_id', 'src');
    form.append('files', new Blob([PDF], { type: 'application/pdf' }), 'report.pdf');
    const uploaded = await engine.http.post('/wf/upload_test_files/', form);
    assert.equal(uploaded.status, 200, uploaded.text);
    const [pdfPath] = uploaded.body.src as string[];
    fake.requests.length = 0;
    const pdf = await run('anthropic/claude-3-5-haiku-latest', pdfPath!);
    const [, doc] = lastUserParts(pdf.request);
    assert.equal(doc!.type, 'document');
    assert.equal(doc!.source.media_type, 'application/pdf');
    assert.ok(Buffer.from(doc!.source.data, 'base64').equals(PDF));

    fake.requests.length = 0;
    const viaOpenAi = await run('openai/gpt-4o', pdfPath!);
    const [, file] = lastUserParts(viaOpenAi.request);
    assert.equal(file!.type, 'file');
    assert.ok(Buffer.from(file!.file.file_data.replace(/^data:application\/pdf;base64,/, ''), 'base64').equals(PDF));
  });

  it('fails the node clearly for a path that names no stored file, without calling the model', async () => {
    const wf = (await engine.http.post('/wf/', { name: 'missing file', definition: visionWorkflow('openai/gpt-4o') }))
      .body;
    await engine.http.post(`/wf/${wf.id}/run/`, {
      initial_inputs: { src: { question: 'Q', image: 'test_files/S1/nope.png' } },
    });
    const [record] = (await engine.http.get(`/wf/${wf.id}/runs/`)).body;
    assert.equal(record.status, 'FAILED');
    assert.match(record.tasks.find((t: { node_id: string }) => t.node_id === 'llm').error, /no stored file/);
    assert.equal(fake.requests.length, 0);
  });
});

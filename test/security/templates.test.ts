import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { RENDER_THREADS } from '../../src/nodes/template-engine/pool';
import { eachAtMost } from '../support/at-most';
import { type SplitEngine, startSplitEngine } from '../support/engine';
import { type FakeLlmServer, startFakeLlmServer } from '../support/fake-llm-server';
import { type FakeServices, startFakeServices } from '../support/fake-services';
import { l, n } from '../support/graphs';
import { CREDENTIALS, fakeBases, runNode, setEnv } from '../support/integration-runs';
import { collectionForm, waitForProgress } from '../support/rag';
import { stack } from '../support/stack';
import { assertNoSecret, secretsOf } from './attack-corpus';

/**
 * Server-side template injection, sent where templates are rendered: the api's chunk preview, an
 * LLM node's prompt, an integration's URL template and a RAG ingest in the worker. Each payload
 * is a known way out of nunjucks/Jinja templates into JavaScript; the JavaScript it would run
 * computes a marker ("42spur", or "pid" and the process id) that nothing else produces. No
 * marker may appear in an answer, a request recorded by the local fake services, a run record
 * or a stored chunk, nor may the api's secret key or database URI (which the payloads reading the
 * environment go for), and Object.prototype stays as it was.
 */

const JS = `"return String(6*7)+'spur'"`;
const PID = `"return 'pid'+process.pid"`;
const POLLUTE = `"Object.prototype.polluted = 'yes'; return ''"`;

/** Attempts to add `polluted` to Object.prototype: by running JavaScript, and with `set`. */
const POLLUTION = [
  `X{{ range[["constructor"]](${POLLUTE})() }}Y`,
  `X{% set __proto__ = {"polluted": "yes"} %}{{ polluted }}Y`,
  `X{% set d = {"__proto__": {"polluted": "yes"} } %}{{ d.polluted }}{{ d | dictsort | length }}Y`,
];

/**
 * Reads of the process's environment and configuration: by name (one a payload, as a failed lookup
 * fails the whole render), through Jinja's classics, and by JavaScript.
 */
const ENVIRONMENT = [
  ...[
    'process.env.SPUR_SECRET_KEY',
    'process',
    'env',
    'environ',
    'config',
    'settings',
    'globalThis.process.env',
    'global.process.env',
    'self',
    'this',
    'require',
    'module',
    '__dirname',
    'config.items()',
    'self.__init__.__globals__.__builtins__',
    'lipsum.__globals__.os.environ',
    '"".__class__.__mro__[1].__subclasses__()',
    'request.environ',
    'cycler.__init__.__globals__.os.environ',
  ].map((read) => `X{{ ${read} }}Y`),
  `X{{ range.constructor("return process.env.SPUR_SECRET_KEY + process.env.SPUR_MONGODB_URI")() }}Y`,
  `X{{ range[["constructor"]]("return JSON.stringify(process.env)")() }}Y`,
  `X{{ cycler(1).next[["constructor"]]("return JSON.stringify(globalThis.process.env)")() }}Y`,
  `X{% set c = "constr" ~ "uctor" %}{{ joiner[c]("return process.env.SPUR_MONGODB_URI")() }}Y`,
  `X{{ (range | attr("constructor"))("return process.mainModule.require('child_process').execSync('env').toString()")() }}Y`,
];

const PAYLOADS: string[] = [
  `X{{ range.constructor(${JS})() }}Y`,
  `X{{ range[["constructor"]](${JS})() }}Y`,
  `X{{ range[["constructor"]](${PID})() }}Y`,
  `X{{ range[["constructor"]][["constructor"]](${JS})() }}Y`,
  `X{{ range[{"a": 1}] }}{{ range[range] }}Y`,
  `X{{ constructor.constructor(${JS})() }}Y`,
  `X{{ constructor }}{{ __proto__ }}{{ hasOwnProperty }}{{ __defineGetter__ }}{{ __lookupGetter__ }}{{ valueOf }}{{ toString }}Y`,
  `X{{ __proto__.constructor.constructor(${JS})() }}Y`,
  `X{{ hasOwnProperty.constructor(${JS})() }}Y`,
  `X{{ __defineGetter__.constructor(${JS})() }}Y`,
  `X{{ valueOf.constructor(${JS})() }}Y`,
  `X{{ toString.call.constructor(${JS})() }}Y`,
  `X{{ "s".constructor.constructor(${JS})() }}Y`,
  `X{{ ''.constructor.constructor(${JS})() }}Y`,
  `X{{ "s"[["constructor"]][["constructor"]](${JS})() }}Y`,
  `X{{ "s".__lookupGetter__("length").constructor(${JS})() }}Y`,
  `X{{ "s".valueOf.constructor(${JS})() }}Y`,
  `X{{ "s".toString.call.constructor(${JS})() }}Y`,
  `X{{ "s".upper.constructor(${JS})() }}Y`,
  `X{{ [].map.constructor(${JS})() }}Y`,
  `X{{ {}.constructor.constructor(${JS})() }}Y`,
  `X{{ {}["__proto__"]["constructor"]["constructor"](${JS})() }}Y`,
  `X{{ {}.items.constructor(${JS})() }}Y`,
  `X{{ cycler.constructor(${JS})() }}Y`,
  `X{{ joiner.constructor(${JS})() }}Y`,
  `X{{ cycler(1).next.constructor(${JS})() }}Y`,
  `X{{ joiner().constructor(${JS})() }}Y`,
  `X{{ range.constructor.call(null, ${JS})() }}Y`,
  `X{{ range.constructor.apply(null, [${JS}])() }}Y`,
  `X{% set c = "constr" ~ "uctor" %}{{ range[c](${JS})() }}{{ range[c][c](${JS})() }}Y`,
  `X{{ (range | attr("constructor"))(${JS})() }}Y`,
  `X{{ ([range] | first).constructor(${JS})() }}Y`,
  `X{{ (nothing | default(range))[["constructor"]](${JS})() }}Y`,
  `X{{ range | list }}{{ range | dump }}{{ cycler(1) | dump }}Y`,
  `X{% for k, v in [{"a": 1}] | groupby("constructor") %}{{ k }}{% endfor %}{{ [{"a": 1}] | sum(attribute="constructor") }}{{ [{"a": 1}] | join(",", attribute="constructor") }}Y`,
  `X{{ [{"a": 1}] | sort(attribute="constructor.constructor") | first }}Y`,
  `X{% set f = range %}{% set g = f.constructor %}{{ g(${JS})() }}Y`,
  `X{% macro m() %}{{ caller.constructor(${JS})() }}{% endmacro %}{% call m() %}in{% endcall %}Y`,
  `X{% for i in [1] %}{{ loop.constructor.constructor(${JS})() }}{{ loop.index.constructor.constructor(${JS})() }}{% endfor %}Y`,
  `X{{ lipsum.__globals__["os"].popen("echo $((6*7))spur").read() }}Y`,
  `X{{ cycler.__init__.__globals__.os.popen("echo $((6*7))spur").read() }}Y`,
  // nunjucks' compiler writes a name into its JavaScript unescaped: this name closes the string.
  'X{{ a"&&Function`throw\\x20String\\x286\\x2a7\\x29\\x2b\\x27spur\\x27```&&" }}Y',
  'X{% set a"&&Function`throw\\x20String\\x286\\x2a7\\x29\\x2b\\x27spur\\x27```&&" = 1 %}Y',
  ...POLLUTION,
  `X{% set constructor = range %}{% set prototype = range %}{{ constructor.constructor(${JS})() }}Y`,
  `X{% include "/etc/passwd" %}Y`,
  `X{% import "x" as y %}Y`,
  ...ENVIRONMENT,
];

const TEXT_PROCESSING = {
  chunk_token_size: 40,
  min_chunk_size_chars: 20,
  min_chunk_length_to_embed: 5,
  embeddings_batch_size: 2,
  max_num_chunks: 20,
  use_vision_model: false,
};
const DOCUMENT = 'Templates are data. This short text becomes one chunk for the template to shape.';
/** Prints Object.prototype's enumerable members from inside a render (dictsort walks them). */
const PROTOTYPE_PROBE = '[{{ {} | dictsort }}][{{ polluted }}]';
/**
 * The probe after a loop of a few tens of milliseconds: as many sent at once as the pool has threads
 * (twice over) overlap, so each thread renders one (a thread takes the next job only when free).
 */
const PROTOTYPE_PROBE_ON_EVERY_THREAD = `{% for i in range(100000) %}{% endfor %}${PROTOTYPE_PROBE}`;
/** Each sent this many times at once: renders that overlap land on every thread of the pool. */
const CONCURRENT = RENDER_THREADS * 2;
/**
 * Payloads in flight at once in the tests that send every payload: each is a request or a run of
 * its own (its own workflow, collection), checked on its own answer and record, and what the fake
 * servers received is checked request by request, so overlapping them changes no check, only the
 * time the file spends waiting (about 80 payloads, four ways, each a round trip or a run).
 */
const PAYLOADS_AT_ONCE = 4;

describe('security: template injection reaches no JavaScript in the api or the worker', function () {
  this.timeout(600_000);
  let engine: SplitEngine;
  let llm: FakeLlmServer;
  let services: FakeServices;
  let markers: string[];
  let secrets: string[];
  const prototypeBefore = Object.getOwnPropertyNames(Object.prototype).sort();

  before(async () => {
    engine = await startSplitEngine({
      SPUR_VECTOR_STORE_URI: path.join(stack.tmpDir, `vectors-${randomBytes(4).toString('hex')}`),
    });
    llm = await startFakeLlmServer();
    services = await startFakeServices();
    await setEnv(engine, {
      OPENAI_API_KEY: 'sk-test',
      OPENAI_API_BASE: `${llm.url}/v1`,
      JINA_API_BASE: fakeBases(services).JINA_API_BASE as string,
      JINA_API_KEY: CREDENTIALS.JINA_API_KEY as string,
    });
    markers = ['42spur', `pid${process.pid}`, `pid${engine.worker.process.pid}`];
    // The worker runs with the api's environment (test/support/worker.ts): one set of secrets.
    secrets = secretsOf(engine.api);
  });
  after(async () => {
    await engine?.close();
    await llm?.close();
    await services?.close();
  });

  function assertNoMarker(where: string, value: unknown): void {
    const text = typeof value === 'string' ? value : JSON.stringify(value);
    for (const marker of markers)
      assert.ok(!text.includes(marker), `${where} holds the marker ${marker}: ${text.slice(0, 500)}`);
    assertNoSecret(where, text, secrets);
  }

  function previewForm(template: string): FormData {
    const form = new FormData();
    form.append('file', new Blob([DOCUMENT], { type: 'text/plain' }), 'doc.txt');
    form.append(
      'chunking_config',
      JSON.stringify({ ...TEXT_PROCESSING, template: { enabled: true, template, metadata_template: { m: template } } }),
    );
    return form;
  }

  const preview = (template: string) => engine.http.post('/rag/collections/preview_chunk/', previewForm(template));

  /** in(question) → llm (system and user message from `template`): the run's record. */
  async function runLlm(template: string) {
    const definition = {
      nodes: [
        n('src', 'InputNode', { output_schema: { question: 'string' } }),
        n('llm', 'SingleLLMCallNode', {
          llm_info: { model: 'openai/gpt-4o', max_tokens: 50, temperature: 0 },
          system_message: template,
          user_message: `Q: {{ src.question }} ${template}`,
        }),
      ],
      links: [l('src', 'llm')],
    };
    const wf = (await engine.http.post('/wf/', { name: `ssti-${randomBytes(4).toString('hex')}`, definition })).body;
    const res = await engine.http.post(`/wf/${wf.id}/run/`, { initial_inputs: { src: { question: 'why?' } } });
    const [run] = (await engine.http.get(`/wf/${wf.id}/runs/`)).body;
    return { res, run };
  }

  it('the chunk preview (POST /api/rag/collections/preview_chunk/) answers no payload with a marker or a secret (the secret key, the database URI)', async () => {
    await eachAtMost(PAYLOADS, PAYLOADS_AT_ONCE, async (payload) => {
      const res = await preview(payload);
      assert.ok([200, 400].includes(res.status), `${payload}: ${res.status} ${res.text.slice(0, 500)}`);
      assertNoMarker(`preview of ${payload}`, res.text);
    });
    // Payloads that stay inside the data render as plain templates would.
    const safe = await preview(
      'X{{ constructor }}{{ __proto__ }}{{ hasOwnProperty }}{{ valueOf }}{{ "s".constructor }}Y',
    );
    assert.equal(safe.status, 200, safe.text.slice(0, 500));
    assert.equal(safe.body.chunks[0].processed_text, 'XY');
  });

  it('an LLM node sends no marker or secret in its prompt to the provider, nor records one in the run', async () => {
    const from = llm.requests.length;
    await eachAtMost(PAYLOADS, PAYLOADS_AT_ONCE, async (payload) => {
      const { res, run } = await runLlm(payload);
      assertNoMarker(`run answer for ${payload}`, res.text);
      assertNoMarker(`run record for ${payload}`, run);
    });
    // Every prompt the payloads' runs sent, each with its own rendered messages.
    const sent = llm.requests.slice(from);
    for (const request of sent) assertNoMarker('prompt sent', request.body);
    assert.ok(sent.length > 0, 'the payloads that render sent their prompts');
  });

  it('an integration URL template (Jina Reader) requests no URL with a marker or a secret, nor records one in the run', async () => {
    const from = services.requests.length;
    await eachAtMost(PAYLOADS, PAYLOADS_AT_ONCE, async (payload) => {
      const run = await runNode(engine, 'JinaReaderNode', {
        url_template: `https://example.org/${payload}`,
        use_readerlm_v2: false,
      });
      assertNoMarker(`run of ${payload}`, run);
    });
    // Every request the payloads' runs made, each with the URL its template rendered.
    for (const r of services.requests.slice(from))
      assertNoMarker('request', { path: r.path, query: r.query.toString(), body: r.body });
    assert.ok(services.to('jina').length > 0, 'the payloads that render made their requests');
  });

  /** A collection of DOCUMENT with `template` as its chunk and metadata template: its stored documents, once ingested. */
  async function ingest(template: string, metadata: string = template) {
    const text_processing = {
      ...TEXT_PROCESSING,
      template: { enabled: true, template, metadata_template: { m: metadata } },
    };
    const created = await engine.http.post(
      '/rag/collections/',
      collectionForm({ name: `ssti-${randomBytes(4).toString('hex')}`, description: null, text_processing }, [
        { name: 'doc.txt', content: DOCUMENT, type: 'text/plain' },
      ]),
    );
    assert.equal(created.status, 200, created.text.slice(0, 500));
    const progress = await waitForProgress(engine.http, `/rag/collections/${created.body.id}/progress/`);
    const documents = await engine.http.get(`/rag/collections/${created.body.id}/documents/`);
    assert.equal(documents.status, 200, documents.text.slice(0, 500));
    return { progress, documents: documents.body as { chunks: { text: string; metadata: unknown }[] }[] };
  }

  it('a RAG ingest in the worker renders its chunks through the template (the control) and stores no chunk text or metadata with a marker or a secret', async () => {
    const control = await ingest('BEGIN[{{ text | upper }}]END', 'chars-{{ text | length }}');
    const chunks = control.documents.flatMap((d) => d.chunks);
    assert.ok(chunks.length > 0, JSON.stringify(control));
    for (const chunk of chunks) {
      assert.ok(chunk.text.startsWith('BEGIN[') && chunk.text.endsWith(']END'), chunk.text);
      assert.match(JSON.stringify(chunk.metadata), /"m":"chars-\d+"/);
    }
    assert.ok(
      chunks
        .map((c) => c.text)
        .join(' ')
        .includes('TEMPLATES ARE DATA'),
      'the text went through `upper`',
    );
    await eachAtMost(PAYLOADS, PAYLOADS_AT_ONCE, async (payload) => {
      const { progress, documents } = await ingest(payload);
      assertNoMarker(`ingest progress of ${payload}`, progress);
      assertNoMarker(`stored chunks of ${payload}`, documents);
    });
  });

  /** `count` runs of runLlm at once: their renders overlap on the worker's pool threads. */
  const runsAtOnce = (template: string, count = CONCURRENT) =>
    Promise.all(Array.from({ length: count }, () => runLlm(template)));

  it('pollution attempts leave Object.prototype unchanged: in the api process, and as later renders on every thread of the pool see it, in the api and in the worker', async () => {
    // Each attempt on every thread: a thread a polluting render ran on is the one that would keep it.
    for (const payload of POLLUTION) {
      await Promise.all(Array.from({ length: CONCURRENT }, () => preview(payload)));
      await runsAtOnce(payload);
    }
    assert.deepEqual(Object.getOwnPropertyNames(Object.prototype).sort(), prototypeBefore);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    const checks = await Promise.all(
      Array.from({ length: CONCURRENT }, () => preview(PROTOTYPE_PROBE_ON_EVERY_THREAD)),
    );
    for (const res of checks) {
      assert.equal(res.status, 200, res.text.slice(0, 500));
      assert.equal(res.body.chunks[0].processed_text, '[[]][]');
    }
    const from = llm.requests.length;
    await runsAtOnce(PROTOTYPE_PROBE_ON_EVERY_THREAD);
    const sent = llm.requests.slice(from).map((r) => r.body.messages as { role: string; content: string }[]);
    assert.equal(sent.length, CONCURRENT);
    for (const messages of sent)
      assert.deepEqual(
        messages.map((m) => m.content.split('\n\n')[0]),
        ['[[]][]', 'Q: why? [[]][]'],
      );
  });

  it('range(1e9) fails at once, naming the range limit', async () => {
    const res = await preview('{% for i in range(1e9) %}x{% endfor %}');
    assert.equal(res.status, 400, res.text.slice(0, 500));
    assert.match(res.text, /range\(\) would make 1000000000 items, more than the limit of 100000/);
  });

  it('a render that runs past the time limit fails naming it, and the api answers other requests meanwhile', async () => {
    let settled = false;
    const slow = preview('{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}').finally(
      () => {
        settled = true;
      },
    );
    const listed = await engine.http.get('/wf/');
    assert.equal(listed.status, 200);
    assert.equal(settled, false, 'GET /api/wf/ was answered while the render was still running');
    const res = await slow;
    assert.equal(res.status, 400, res.text.slice(0, 500));
    assert.match(res.text, /took longer than the time limit of 1 s/);
  });

  it('a filter call the render cannot interrupt is stopped with its thread, naming the limit it hit (time or memory), and the next render works', async () => {
    // One step building a 1 GB string: the thread is stopped by its heap limit or, on a host slow
    // enough, by the time limit's safety net, whichever comes first.
    const res = await preview('{{ "x" | center(1000000000) | length }}');
    assert.equal(res.status, 400, res.text.slice(0, 500));
    assert.match(res.text, /took longer than the time limit of 1 s|used more than the memory limit of 512 MB/);
    const next = await preview('{{ text | length }}');
    assert.equal(next.status, 200, next.text.slice(0, 500));
    assert.equal(next.body.chunks[0].processed_text, String(DOCUMENT.length));
  });

  it('a render whose output passes the output limit fails naming it', async () => {
    // A 1 MiB string built in a few steps, written nine times: the output limit trips long before
    // the time limit could, however loaded the machine.
    const doubling = Array.from({ length: 16 }, (_, i) => `{% set s${i + 1} = s${i} ~ s${i} %}`).join('');
    const res = await preview(
      `{% set s0 = "0123456789abcdef" %}${doubling}{% for i in range(9) %}{{ s16 }}{% endfor %}`,
    );
    assert.equal(res.status, 400, res.text.slice(0, 500));
    assert.match(res.text, /output is longer than the limit of 8388608 characters/);
  });

  it('in the worker, a prompt past the time limit fails its node naming the limit, and the next run renders normally', async () => {
    const { run } = await runLlm('{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}');
    assert.equal(run.status, 'FAILED');
    assert.match(JSON.stringify(run), /took longer than the time limit of 1 s/);
    const from = llm.requests.length;
    const next = await runLlm('fine');
    assert.equal(next.run.status, 'COMPLETED', JSON.stringify(next.run).slice(0, 500));
    assert.equal(llm.requests.length, from + 1);
  });
});

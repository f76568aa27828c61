import assert from 'node:assert/strict';
import type { Engine } from '../support/engine';
import type { FakeEmbeddingsServer } from '../support/fake-embeddings-server';
import {
  INDEX_EMBEDDING,
  SMALL_CHUNKS as TEXT_PROCESSING,
  collectionForm,
  startRagEngine,
  waitForProgress,
} from '../support/rag';
import { TOPICS } from '../support/rag-fixtures';

const GARBAGE = Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919 + 13) % 256));

describe('e2e: knowledge bases — bad input, failures and the listings', function () {
  this.timeout(240_000);
  let engine: Engine;
  let fake: FakeEmbeddingsServer;
  before(async () => {
    ({ engine, fake } = await startRagEngine());
  });
  after(async () => {
    await engine?.close();
    await fake?.close();
  });

  async function collection(name: string, files: Parameters<typeof collectionForm>[1]) {
    const res = await engine.http.post(
      '/rag/collections/',
      collectionForm({ name, text_processing: TEXT_PROCESSING }, files),
    );
    assert.equal(res.status, 200, res.text);
    await waitForProgress(engine.http, `/rag/collections/${res.body.id}/progress/`);
    return (await engine.http.get(`/rag/collections/${res.body.id}/`)).body as {
      id: string;
      status: string;
      error_message: string | null;
      document_count: number;
      chunk_count: number;
    };
  }

  it('fails only the unreadable files, with a message each; the rest are processed and the progress completes', async () => {
    const c = await collection('mixed', [
      { name: 'good.txt', content: TOPICS.cooking },
      { name: 'garbage.bin', content: GARBAGE },
      { name: 'broken.pdf', content: 'this is not a PDF at all', type: 'application/pdf' },
    ]);
    assert.equal(c.status, 'ready');
    assert.match(c.error_message ?? '', /2 of 3 documents could not be processed: .*garbage\.bin: .*broken\.pdf: /);
    const progress = (await engine.http.get(`/rag/collections/${c.id}/progress/`)).body;
    assert.deepEqual([progress.status, progress.processed_files, progress.total_files], ['completed', 3, 3]);
    const docs = (await engine.http.get(`/rag/collections/${c.id}/documents/`)).body as {
      status: string;
      error_message: string | null;
      chunks: unknown[];
      metadata: { source_id: string };
    }[];
    const by = Object.fromEntries(docs.map((d) => [d.metadata.source_id, d]));
    assert.equal(by['good.txt']?.status, 'completed');
    assert.ok((by['good.txt']?.chunks.length ?? 0) >= 1);
    assert.equal(by['garbage.bin']?.status, 'failed');
    assert.match(by['garbage.bin']?.error_message ?? '', /not UTF-8 text|not text/);
    assert.match(by['broken.pdf']?.error_message ?? '', /could not be read as PDF/);
    assert.deepEqual([c.document_count, c.chunk_count], [3, by['good.txt']?.chunks.length]);

    const allBad = await collection('all bad', [{ name: 'x.bin', content: GARBAGE }]);
    assert.equal(allBad.status, 'failed');
    const failed = (await engine.http.get(`/rag/collections/${allBad.id}/progress/`)).body;
    assert.equal(failed.status, 'failed');
    assert.match(failed.error_message, /x\.bin/);
  });

  it('answers 422 for bad forms and settings, 404 for unknown ids', async () => {
    const http = engine.http;
    const bad = new FormData();
    bad.append('metadata', '{not json');
    const r1 = await http.post('/rag/collections/', bad);
    assert.equal(r1.status, 422);
    assert.deepEqual(r1.body.detail[0].loc, ['body', 'metadata']);
    assert.equal((await http.post('/rag/collections/', new FormData())).status, 422);
    const vision = await http.post(
      '/rag/collections/',
      collectionForm({ name: 'v', text_processing: { use_vision_model: true } }, []),
    );
    assert.equal(vision.status, 422);
    const empty = await http.post('/rag/collections/', collectionForm({ name: 'empty' }, []));
    assert.deepEqual([empty.status, empty.body.status, empty.body.document_count], [200, 'ready', 0]);
    assert.equal(
      (await http.post('/rag/collections/', collectionForm({ name: 'empty' }, []))).status,
      409,
      'names are unique',
    );

    const c = await collection('for indices', [{ name: 'a.txt', content: TOPICS.sailing }]);
    const idx = (embedding: Record<string, unknown>, collectionId = c.id) =>
      http.post('/rag/indices/', {
        name: 'i',
        collection_id: collectionId,
        embedding: { ...INDEX_EMBEDDING, ...embedding },
      });
    const weight = await idx({ keyword_weight: 1.5 });
    assert.equal(weight.status, 422);
    assert.deepEqual(weight.body.detail[0].loc, ['body', 'embedding', 'keyword_weight']);
    assert.equal((await idx({ model: 'openai/no-such-model' })).status, 422);
    const pinecone = await idx({ vector_db: 'pinecone' });
    assert.equal(pinecone.status, 422);
    assert.match(pinecone.body.detail[0].msg, /lancedb/);
    assert.equal((await idx({ model: 'cohere/embed-english-v3.0' })).status, 400, 'COHERE_API_KEY is not set');
    assert.equal((await idx({}, 'DC999999')).status, 404);

    for (const path of [
      '/rag/collections/DC999999/',
      '/rag/collections/DC999999/progress/',
      '/rag/collections/DC999999/documents/',
      '/rag/indices/VI999999/',
      '/rag/indices/VI999999/progress/',
    ]) {
      const res = await http.get(path);
      assert.equal(res.status, 404, path);
      assert.equal(typeof res.body.detail, 'string');
    }
    assert.equal((await http.post('/rag/indices/VI999999/retrieve/', { query: 'x' })).status, 404);
    assert.equal((await http.delete(`/rag/collections/${c.id}/documents/no-such-doc/`)).status, 404);
  });

  it('answers 409 with the progress while an index builds; a provider that refuses fails the index with its reason', async () => {
    const http = engine.http;
    const c = await collection('slow', [{ name: 'a.txt', content: `${TOPICS.astronomy} ${TOPICS.volcano}` }]);
    fake.delayMs = 1500;
    try {
      const index = (
        await http.post('/rag/indices/', { name: 'slow', collection_id: c.id, embedding: INDEX_EMBEDDING })
      ).body;
      const early = await http.post(`/rag/indices/${index.id}/retrieve/`, { query: 'telescope' });
      assert.equal(early.status, 409, early.text);
      assert.match(early.body.detail, /still being built/);
      assert.equal(early.body.progress.id, index.id);
      assert.equal(early.body.progress.status, 'processing');
      fake.delayMs = 0;
      assert.equal((await waitForProgress(http, `/rag/indices/${index.id}/progress/`)).status, 'completed');
      assert.equal(
        (await http.post(`/rag/indices/${index.id}/retrieve/`, { query: 'telescope galaxies' })).status,
        200,
      );
    } finally {
      fake.delayMs = 0;
    }

    fake.failNext(1, 401);
    const refused = (
      await http.post('/rag/indices/', { name: 'refused', collection_id: c.id, embedding: INDEX_EMBEDDING })
    ).body;
    const progress = await waitForProgress(http, `/rag/indices/${refused.id}/progress/`);
    assert.equal(progress.status, 'failed');
    assert.match(String(progress.error_message), /401/);
    const got = (await http.get(`/rag/indices/${refused.id}/`)).body;
    assert.equal(got.status, 'failed');
    assert.match(got.error_message, /401/);
    assert.equal((await http.post(`/rag/indices/${refused.id}/retrieve/`, { query: 'x' })).status, 409);
  });

  it("embeds through Azure OpenAI's deployment URL and Ollama's /v1; a model answering other dimensions fails the index", async () => {
    const http = engine.http;
    const settings = {
      AZURE_OPENAI_ENDPOINT: fake.url,
      AZURE_OPENAI_API_KEY: 'azure-key',
      AZURE_OPENAI_API_VERSION: '2024-10-21',
      OLLAMA_BASE_URL: fake.url,
    };
    for (const [name, value] of Object.entries(settings))
      assert.equal((await http.post('/env-mgmt/', { name, value })).status, 200);
    const c = await collection('providers', [{ name: 'a.txt', content: TOPICS.gardening }]);
    const azure = (
      await http.post('/rag/indices/', {
        name: 'azure',
        collection_id: c.id,
        embedding: { ...INDEX_EMBEDDING, model: 'azure/text-embedding-3-small' },
      })
    ).body;
    assert.equal((await waitForProgress(http, `/rag/indices/${azure.id}/progress/`)).status, 'completed');
    const sent = fake.requests.filter((r) => r.path === '/openai/deployments/text-embedding-3-small/embeddings');
    assert.ok(sent.length >= 1, 'Azure deployment URL');
    assert.ok(sent.every((r) => r.headers['api-key'] === 'azure-key'));
    const found = await http.post(`/rag/indices/${azure.id}/retrieve/`, { query: 'tomato compost' });
    assert.equal(found.body.results[0].metadata.document_title, 'a.txt');

    // nomic-embed-text has 768 dimensions; this server answers 1536 when not asked for others.
    const ollama = (
      await http.post('/rag/indices/', {
        name: 'ollama',
        collection_id: c.id,
        embedding: { ...INDEX_EMBEDDING, model: 'ollama/nomic-embed-text' },
      })
    ).body;
    const failed = await waitForProgress(http, `/rag/indices/${ollama.id}/progress/`);
    assert.equal(failed.status, 'failed');
    assert.match(String(failed.error_message), /1536-dimensional vectors; the index expects 768/);
    assert.ok(
      fake.requests.some((r) => r.path === '/v1/embeddings' && r.body.model === 'nomic-embed-text'),
      "Ollama's OpenAI-compatible /v1",
    );
  });

  it('previews chunks of a file; an unreadable one is a 400', async () => {
    const form = new FormData();
    form.append('file', new Blob([Object.values(TOPICS).join('\n')], { type: 'text/plain' }), 'all.txt');
    form.append(
      'chunking_config',
      JSON.stringify({
        ...TEXT_PROCESSING,
        template: { enabled: true, template: 'Topic: {{ text }}', metadata_template: { kind: 'note' } },
      }),
    );
    const res = await engine.http.post('/rag/collections/preview_chunk/', form);
    assert.equal(res.status, 200, res.text);
    assert.ok(res.body.total_chunks >= 3);
    assert.equal(res.body.chunks.length, 3);
    assert.equal(res.body.chunks[0].chunk_index, 1);
    assert.equal(res.body.chunks[0].processed_text, `Topic: ${res.body.chunks[0].original_text}`);
    assert.deepEqual(res.body.chunks[0].metadata, { kind: 'note' });
    const bad = new FormData();
    bad.append('file', new Blob([new Uint8Array(GARBAGE)]), 'g.bin');
    bad.append('chunking_config', '{}');
    assert.equal((await engine.http.post('/rag/collections/preview_chunk/', bad)).status, 400);
  });

  it("lists embedding models and vector stores in PySpur's shape, saying which are usable now", async () => {
    const models = (await engine.http.get('/env-mgmt/embedding-models/')).body;
    assert.deepEqual(
      [
        models['openai/text-embedding-3-small'].dimensions,
        models['openai/text-embedding-3-small'].provider,
        models['openai/text-embedding-3-small'].usable,
      ],
      [1536, 'OpenAI', true],
    );
    assert.deepEqual(
      [models['cohere/embed-english-v3.0'].usable, models['cohere/embed-english-v3.0'].missing_env_vars],
      [false, ['COHERE_API_KEY']],
    );
    assert.equal(models['ollama/nomic-embed-text'].usable, true);
    const stores = (await engine.http.get('/env-mgmt/vector-stores/')).body;
    assert.equal(stores.lancedb.usable, true);
    assert.equal(stores.pinecone.usable, false);
  });
});

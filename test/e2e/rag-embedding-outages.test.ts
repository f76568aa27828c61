import assert from 'node:assert/strict';
import type { Engine } from '../support/engine';
import type { FakeEmbeddingsServer } from '../support/fake-embeddings-server';
import { l, n } from '../support/graphs';
import {
  INDEX_EMBEDDING,
  SMALL_CHUNKS as TEXT_PROCESSING,
  collectionForm,
  startRagEngine,
  waitForProgress,
} from '../support/rag';
import { TOPICS } from '../support/rag-fixtures';

const inputsOf = (body: { input: string | string[] }) => (Array.isArray(body.input) ? body.input : [body.input]);

describe('e2e: knowledge bases through embedding provider outages and rate limits', function () {
  this.timeout(240_000);
  let engine: Engine;
  let fake: FakeEmbeddingsServer;
  let collectionId: string;
  before(async () => {
    ({ engine, fake } = await startRagEngine());
    const res = await engine.http.post(
      '/rag/collections/',
      collectionForm({ name: 'outages', text_processing: TEXT_PROCESSING }, [
        { name: 'astronomy.txt', content: TOPICS.astronomy },
        { name: 'volcano.txt', content: TOPICS.volcano },
      ]),
    );
    assert.equal(res.status, 200, res.text);
    assert.equal((await waitForProgress(engine.http, `/rag/collections/${res.body.id}/progress/`)).status, 'completed');
    collectionId = res.body.id;
  });
  after(async () => {
    await engine?.close();
    await fake?.close();
  });

  /** Builds an index of the collection to its end; returns its id and the embedding requests it made. */
  async function buildIndex(name: string) {
    const first = fake.requests.length;
    const index = (
      await engine.http.post('/rag/indices/', { name, collection_id: collectionId, embedding: INDEX_EMBEDDING })
    ).body;
    const progress = await waitForProgress(engine.http, `/rag/indices/${index.id}/progress/`);
    return { id: index.id as string, progress, requests: fake.requests.slice(first) };
  }

  it('builds an index through a provider answering 503 twice: the batch is retried and every chunk has its vector', async () => {
    const clean = await buildIndex('clean');
    assert.equal(clean.progress.status, 'completed');
    fake.failNext(2, 503);
    const built = await buildIndex('after 503s');
    assert.equal(built.progress.status, 'completed', JSON.stringify(built.progress));
    // The first batch was asked three times (two 503s, then the answer); the rest as without the outage.
    const [firstBatch] = clean.requests;
    assert.deepEqual(
      built.requests.slice(0, 3).map((r) => inputsOf(r.body)),
      [0, 1, 2].map(() => inputsOf(firstBatch!.body)),
    );
    assert.equal(built.requests.length, clean.requests.length + 2);
    assert.equal(
      (await engine.http.get(`/rag/indices/${built.id}/`)).body.chunk_count,
      (await engine.http.get(`/rag/indices/${clean.id}/`)).body.chunk_count,
    );
    const hit = await engine.http.post(`/rag/indices/${built.id}/retrieve/`, {
      query: 'lava and magma in the volcano crater',
      top_k: 1,
    });
    assert.equal(hit.status, 200, hit.text);
    assert.equal(hit.body.results[0].metadata.document_title, 'volcano.txt');
  });

  it("builds an index through a 429: the same batch is asked again once the provider's Retry-After has passed, and the index completes", async () => {
    // Longer than the build's own first retry interval (2 s, rag-index.workflow.ts), so only the header explains the wait.
    fake.failNext(1, 429, { 'retry-after': '4' });
    const built = await buildIndex('after a 429');
    assert.equal(built.progress.status, 'completed', JSON.stringify(built.progress));
    const [limited, retried] = built.requests;
    assert.ok(limited && retried);
    assert.deepEqual(inputsOf(retried.body), inputsOf(limited.body), 'the same batch again');
    // On the provider's clock.
    assert.ok(retried.at - limited.at >= 3900, `asked again ${retried.at - limited.at} ms after a 429 saying 4 s`);
  });

  it('answers a retrieval while the provider is down with 503 and Retry-After (never a 500), and with results once it is back', async () => {
    const { id } = await buildIndex('for retrieval');
    fake.failNext(1, 503);
    const down = await engine.http.post(`/rag/indices/${id}/retrieve/`, { query: 'telescope galaxies', top_k: 1 });
    assert.equal(down.status, 503, down.text);
    assert.ok(down.headers.get('retry-after'), 'Retry-After');
    assert.match(down.body.detail, /503/);
    const back = await engine.http.post(`/rag/indices/${id}/retrieve/`, { query: 'telescope galaxies', top_k: 1 });
    assert.equal(back.status, 200, back.text);
    assert.equal(back.body.results[0].metadata.document_title, 'astronomy.txt');
  });

  it('provider connections closed as a retrieval reuses them are passed over, one after another: the retrieval answers 200', async () => {
    const { id } = await buildIndex('for reused connections');
    const query = { query: 'telescope galaxies', top_k: 1 };
    // Three retrievals at once, each answer held a moment: three connections to the provider, kept alive.
    fake.delayMs = 300;
    const warm = await Promise.all([1, 2, 3].map(() => engine.http.post(`/rag/indices/${id}/retrieve/`, query)));
    fake.delayMs = 0;
    for (const res of warm) assert.equal(res.status, 200, res.text);
    const before = fake.requests.length;
    const droppedBefore = fake.dropped;
    fake.dropNextOnReusedConnections(2);
    const again = await engine.http.post(`/rag/indices/${id}/retrieve/`, query);
    assert.equal(again.status, 200, again.text);
    assert.equal(again.body.results[0].metadata.document_title, 'astronomy.txt');
    assert.equal(fake.dropped - droppedBefore, 2, 'two kept-alive connections were found closed');
    assert.equal(fake.requests.length, before + 1, 'the dropped requests were never read; the last try was');
  });

  it('a RetrieverNode embeds its rendered query template, and rides out a 503 by retrying', async () => {
    const { id } = await buildIndex('for the node');
    const wf = await engine.http.post('/wf/', {
      name: 'retriever through an outage',
      definition: {
        nodes: [
          n('input_node', 'InputNode', { output_schema: { question: 'string', topic: 'string' } }),
          n('retriever', 'RetrieverNode', {
            vector_index_id: id,
            top_k: 1,
            query_template: 'About {{input_node.topic}}: {{input_node.question}}',
          }),
          n('out', 'OutputNode', { output_map: { results: 'retriever.results' } }),
        ],
        links: [l('input_node', 'retriever'), l('retriever', 'out')],
      },
    });
    assert.equal(wf.status, 200, wf.text);
    const first = fake.requests.length;
    fake.failNext(1, 503);
    const run = await engine.http.post(`/wf/${wf.body.id}/run/`, {
      initial_inputs: { input_node: { question: 'lava and magma in the crater', topic: 'volcanoes' } },
    });
    assert.equal(run.status, 200, run.text);
    assert.equal(run.body.retriever.results[0].metadata.document_title, 'volcano.txt', JSON.stringify(run.body));
    const asked = fake.requests.slice(first).map((r) => inputsOf(r.body));
    assert.deepEqual(
      asked,
      [['About volcanoes: lava and magma in the crater'], ['About volcanoes: lava and magma in the crater']],
      'the rendered template, asked again after the 503',
    );
  });
});

import assert from 'node:assert/strict';
import type { SplitEngine } from '../support/engine';
import type { FakeEmbeddingsServer } from '../support/fake-embeddings-server';
import { collectionForm, startSplitRagEngine, waitForProgress } from '../support/rag';
import { startWorker } from '../support/worker';

const TEXT_PROCESSING = {
  chunk_token_size: 40,
  min_chunk_size_chars: 20,
  min_chunk_length_to_embed: 5,
  embeddings_batch_size: 64,
  max_num_chunks: 100000,
  use_vision_model: false,
};

/** A large text of its own per file: enough tokens that ingesting FILES of them takes a while. */
const FILES = 10;
function bigText(k: number): string {
  const lines: string[] = [];
  for (let j = 0; j < 1500; j++)
    lines.push(`Record ${k}-${j} notes reading ${(j * 7919) % 10007} from sensor${k} station${j % 97}.`);
  return lines.join('\n');
}

type Doc = { id: string; status: string; chunks: { id: string; text: string }[]; metadata: { source_id: string } };

describe('e2e: knowledge bases — a worker killed mid-ingest and mid-index', function () {
  this.timeout(300_000);
  let engine: SplitEngine;
  let fake: FakeEmbeddingsServer;
  before(async () => {
    // Every index here gets the approximate (HNSW) index that large ones get (SPUR_VECTOR_ANN_MIN_ROWS).
    ({ engine, fake } = await startSplitRagEngine({ SPUR_VECTOR_ANN_MIN_ROWS: '100' }));
  });
  after(async () => {
    await engine?.close();
    await fake?.close();
  });

  it('resumes on a new worker after kill -9 without duplicating chunks; the result equals an uninterrupted ingest', async () => {
    const http = engine.http;
    const files = Array.from({ length: FILES }, (_, k) => ({
      name: `big-${k}.txt`,
      content: bigText(k),
      type: 'text/plain',
    }));
    const created = (
      await http.post('/rag/collections/', collectionForm({ name: 'killed', text_processing: TEXT_PROCESSING }, files))
    ).body;
    // Kill once some documents are done and the rest are not.
    let seen = { processed_files: 0, total_files: 0, status: '' };
    const deadline = Date.now() + 120_000;
    while (seen.processed_files < 2) {
      seen = (await http.get(`/rag/collections/${created.id}/progress/`)).body;
      if (Date.now() > deadline) throw new Error(`no progress: ${JSON.stringify(seen)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    engine.worker.process.kill('SIGKILL');
    await engine.worker.process.exited;
    const atKill = (await http.get(`/rag/collections/${created.id}/progress/`)).body;
    assert.equal(atKill.status, 'processing', 'the worker died mid-ingest');
    assert.ok(atKill.processed_files < FILES, JSON.stringify(atKill));

    engine.worker = await startWorker(engine.api.env);
    const done = await waitForProgress(http, `/rag/collections/${created.id}/progress/`, 240_000);
    assert.equal(done.status, 'completed', JSON.stringify(done));
    assert.equal(done.processed_files, FILES);

    const docs = (await http.get(`/rag/collections/${created.id}/documents/`)).body as Doc[];
    assert.equal(docs.length, FILES);
    const allIds = docs.flatMap((d) => d.chunks.map((c) => c.id));
    assert.equal(new Set(allIds).size, allIds.length, 'no chunk twice');
    for (const d of docs) d.chunks.forEach((c, i) => assert.equal(c.id, `${d.id}_${i}`));
    const collection = (await http.get(`/rag/collections/${created.id}/`)).body;
    assert.equal(collection.chunk_count, allIds.length);
    assert.equal(done.processed_chunks, allIds.length);

    // The same files ingested without interruption give the same chunks.
    const control = (
      await http.post('/rag/collections/', collectionForm({ name: 'control', text_processing: TEXT_PROCESSING }, files))
    ).body;
    await waitForProgress(http, `/rag/collections/${control.id}/progress/`, 240_000);
    const controlDocs = (await http.get(`/rag/collections/${control.id}/documents/`)).body as Doc[];
    const texts = (list: Doc[]) =>
      Object.fromEntries(list.map((d) => [d.metadata.source_id, d.chunks.map((c) => c.text)]));
    assert.deepEqual(texts(docs), texts(controlDocs));
  });

  it('finishes an index build after kill -9 of the worker mid-build, with one vector per chunk', async () => {
    const http = engine.http;
    const processing = { ...TEXT_PROCESSING, embeddings_batch_size: 10 };
    const files = [0, 1].map((k) => ({
      name: `mid-${k}.txt`,
      content: bigText(100 + k).slice(0, 40_000),
      type: 'text/plain',
    }));
    const created = (
      await http.post('/rag/collections/', collectionForm({ name: 'index killed', text_processing: processing }, files))
    ).body;
    await waitForProgress(http, `/rag/collections/${created.id}/progress/`, 240_000);
    const chunkCount = (await http.get(`/rag/collections/${created.id}/`)).body.chunk_count as number;
    assert.ok(chunkCount > 400, `several pages of chunks (${chunkCount})`);
    fake.delayMs = 150;
    try {
      const index = (
        await http.post('/rag/indices/', {
          name: 'killed',
          collection_id: created.id,
          embedding: {
            model: 'openai/text-embedding-3-small',
            vector_db: 'lancedb',
            search_strategy: 'vector',
            keyword_weight: 0,
          },
        })
      ).body;
      const deadline = Date.now() + 120_000;
      for (;;) {
        const p = (await http.get(`/rag/indices/${index.id}/progress/`)).body;
        if (p.processed_chunks > 0) break;
        if (p.status !== 'processing' || Date.now() > deadline)
          throw new Error(`index not building: ${JSON.stringify(p)}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      engine.worker.process.kill('SIGKILL');
      await engine.worker.process.exited;
      const atKill = (await http.get(`/rag/indices/${index.id}/progress/`)).body;
      assert.equal(atKill.status, 'processing');
      assert.ok(atKill.processed_chunks < chunkCount, JSON.stringify(atKill));
      fake.delayMs = 0;
      engine.worker = await startWorker(engine.api.env);
      const done = await waitForProgress(http, `/rag/indices/${index.id}/progress/`, 240_000);
      assert.equal(done.status, 'completed', JSON.stringify(done));
      // The store's own row count: a page written twice would show here.
      assert.equal((await http.get(`/rag/indices/${index.id}/`)).body.chunk_count, chunkCount);
      // Searched through the approximate (HNSW) index, which may rank a near-duplicate record first:
      // the hits are the query's document's chunks, best first.
      const hits = (
        await http.post(`/rag/indices/${index.id}/retrieve/`, {
          query: 'Record 101-7 notes reading 5398 from sensor101 station7',
          top_k: 3,
        })
      ).body as { results: { text: string; score: number }[] };
      assert.equal(hits.results.length, 3);
      for (const hit of hits.results) assert.match(hit.text, /from sensor101 /);
      const scores = hits.results.map((h) => h.score);
      assert.deepEqual(
        scores,
        [...scores].sort((a, b) => b - a),
      );
    } finally {
      fake.delayMs = 0;
    }
  });
});

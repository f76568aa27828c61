import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Engine } from '../support/engine';
import type { FakeEmbeddingsServer } from '../support/fake-embeddings-server';
import { l, n } from '../support/graphs';
import { INDEX_EMBEDDING, collectionForm, filesForm, startRagEngine, waitForProgress } from '../support/rag';
import { TOPICS, makeDocx, makePdf } from '../support/rag-fixtures';

const TEXT_PROCESSING = {
  chunk_token_size: 40,
  min_chunk_size_chars: 20,
  min_chunk_length_to_embed: 5,
  embeddings_batch_size: 2,
  max_num_chunks: 1000,
  use_vision_model: false,
};

describe('e2e: knowledge bases — collections, indices, retrieval, RetrieverNode', function () {
  this.timeout(240_000);
  let engine: Engine;
  let fake: FakeEmbeddingsServer;
  let vectorDir: string;
  before(async () => {
    ({ engine, fake, vectorDir } = await startRagEngine());
  });
  after(async () => {
    await engine?.close();
    await fake?.close();
  });

  async function createCollection(name: string, files: Parameters<typeof collectionForm>[1]) {
    const res = await engine.http.post(
      '/rag/collections/',
      collectionForm({ name, description: `${name} docs`, text_processing: TEXT_PROCESSING }, files),
    );
    assert.equal(res.status, 200, res.text);
    assert.match(res.body.id, /^DC\d+$/);
    return res.body as { id: string; status: string };
  }

  async function createIndex(name: string, collectionId: string, embedding: Record<string, unknown> = INDEX_EMBEDDING) {
    const res = await engine.http.post('/rag/indices/', {
      name,
      description: null,
      collection_id: collectionId,
      embedding,
    });
    assert.equal(res.status, 200, res.text);
    assert.match(res.body.id, /^VI\d+$/);
    return res.body as { id: string; status: string };
  }

  it('ingests five file types, builds an index and retrieves the right chunk first, over HTTP and from a RetrieverNode run', async () => {
    const http = engine.http;
    const files = [
      { name: 'astronomy.txt', content: TOPICS.astronomy, type: 'text/plain' },
      { name: 'cooking.md', content: `# Bakery\n\n${TOPICS.cooking}`, type: 'text/markdown' },
      {
        name: 'gardening.html',
        content: `<html><body><h1>Garden</h1><p>${TOPICS.gardening}</p></body></html>`,
        type: 'text/html',
      },
      { name: 'sailing.docx', content: await makeDocx([TOPICS.sailing]) },
      { name: 'volcano.pdf', content: makePdf([TOPICS.volcano.split('. ')]), type: 'application/pdf' },
    ];
    const created = await createCollection('five kinds', files);
    assert.equal(created.status, 'processing');
    const progress = await waitForProgress(http, `/rag/collections/${created.id}/progress/`);
    assert.equal(progress.status, 'completed', JSON.stringify(progress));
    assert.equal(progress.progress, 1);
    assert.equal(progress.total_files, 5);
    assert.equal(progress.processed_files, 5);

    const docs = (await http.get(`/rag/collections/${created.id}/documents/`)).body as {
      id: string;
      status: string;
      chunks: {
        id: string;
        text: string;
        metadata: { source_id: string; document_id: string; page_number: number | null };
      }[];
    }[];
    assert.equal(docs.length, 5);
    const chunkTotal = docs.reduce((s, d) => s + d.chunks.length, 0);
    for (const doc of docs) {
      assert.equal(doc.status, 'completed');
      assert.ok(doc.chunks.length >= 1, `${doc.chunks[0]?.metadata.source_id} has chunks`);
      doc.chunks.forEach((c, i) => {
        assert.equal(c.id, `${doc.id}_${i}`);
        assert.equal(c.metadata.document_id, doc.id);
      });
    }
    const pdfDoc = docs.find((d) => d.chunks[0]?.metadata.source_id === 'volcano.pdf');
    assert.equal(pdfDoc?.chunks[0]?.metadata.page_number, 1, 'PDF chunks know their page');
    const collection = (await http.get(`/rag/collections/${created.id}/`)).body;
    assert.deepEqual(
      [collection.status, collection.document_count, collection.chunk_count, collection.error_message],
      ['ready', 5, chunkTotal, null],
    );

    const index = await createIndex('five kinds index', created.id);
    assert.equal(index.status, 'processing');
    const built = await waitForProgress(http, `/rag/indices/${index.id}/progress/`);
    assert.equal(built.status, 'completed', JSON.stringify(built));
    assert.equal(built.processed_chunks, chunkTotal);
    const got = (await http.get(`/rag/indices/${index.id}/`)).body;
    assert.deepEqual(
      [got.status, got.chunk_count, got.embedding_model, got.vector_db],
      ['ready', chunkTotal, 'openai/text-embedding-3-small', 'lancedb'],
    );
    // Batches of embeddings_batch_size, with the key from env management, to OPENAI_API_BASE.
    const embeds = fake.requests.filter((r) => r.path === '/v1/embeddings');
    assert.ok(
      embeds.every(
        (r) => r.headers.authorization === 'Bearer sk-embed-test' && r.body.model === 'text-embedding-3-small',
      ),
    );
    assert.ok(
      embeds.every((r) => (Array.isArray(r.body.input) ? r.body.input.length : 1) <= 2),
      'batches of at most embeddings_batch_size',
    );

    const hit = await http.post(`/rag/indices/${index.id}/retrieve/`, {
      query: 'which telescope observes distant galaxies and quasars',
      top_k: 3,
    });
    assert.equal(hit.status, 200, hit.text);
    assert.ok(hit.body.results.length >= 1);
    assert.equal(hit.body.total_results, hit.body.results.length);
    assert.equal(hit.body.results[0].metadata.document_title, 'astronomy.txt');
    assert.match(hit.body.results[0].text, /telescope/);
    const scores = hit.body.results.map((r: { score: number }) => r.score);
    assert.deepEqual(
      scores,
      [...scores].sort((a, b) => b - a),
      'best first',
    );
    assert.ok(
      scores.every((s: number) => s >= 0.05 && s <= 1.0001),
      'cosine similarities above the threshold',
    );
    const strict = await http.post(`/rag/indices/${index.id}/retrieve/`, {
      query: 'which telescope observes distant galaxies',
      top_k: 5,
      score_threshold: 0.99,
    });
    assert.equal(strict.body.total_results, 0, 'score_threshold is applied');
    // Hybrid: cosine and BM25 weighted; keyword only: the chunk with the rare word scores 1.
    const hybrid = await http.post(`/rag/indices/${index.id}/retrieve/`, {
      query: 'sourdough crust crackles',
      top_k: 3,
      keyword_weight: 0.5,
      semantic_weight: 0.5,
    });
    assert.equal(hybrid.status, 200, hybrid.text);
    assert.equal(hybrid.body.results[0].metadata.document_title, 'cooking.md');
    assert.ok(hybrid.body.results.every((r: { score: number }) => r.score <= 1.0001));
    const keywordOnly = await http.post(`/rag/indices/${index.id}/retrieve/`, {
      query: 'quasars',
      top_k: 3,
      keyword_weight: 1,
      semantic_weight: 0,
      score_threshold: 0.5,
    });
    assert.equal(keywordOnly.body.total_results, 1, keywordOnly.text);
    assert.match(keywordOnly.body.results[0].text, /quasars/);
    assert.ok(Math.abs(keywordOnly.body.results[0].score - 1) < 1e-6);

    const wf = await http.post('/wf/', {
      name: 'ask the knowledge base',
      definition: {
        nodes: [
          n('input_node', 'InputNode', { output_schema: { question: 'string' } }),
          n('retriever', 'RetrieverNode', {
            vector_index_id: index.id,
            top_k: 2,
            query_template: '{{input_node.question}}',
          }),
          n('out', 'OutputNode', { output_map: { results: 'retriever.results', total: 'retriever.total_results' } }),
        ],
        links: [l('input_node', 'retriever'), l('retriever', 'out')],
      },
    });
    assert.equal(wf.status, 200, wf.text);
    const run = await http.post(`/wf/${wf.body.id}/run/`, {
      initial_inputs: { input_node: { question: 'lava and magma in the volcano crater' } },
    });
    assert.equal(run.status, 200, run.text);
    const out = run.body.retriever;
    assert.ok(out.total_results >= 1 && out.total_results <= 2, JSON.stringify(run.body));
    assert.equal(out.results[0].metadata.document_title, 'volcano.pdf');
    assert.match(out.results[0].text, /[Mm]agma|[Ll]ava/);
  });

  it('keeps indices apart: each retrieves only its own chunks, and deleting one removes its vectors', async () => {
    const http = engine.http;
    const a = await createCollection('iso a', [{ name: 'sail.txt', content: TOPICS.sailing }]);
    const b = await createCollection('iso b', [{ name: 'garden.txt', content: TOPICS.gardening }]);
    await waitForProgress(http, `/rag/collections/${a.id}/progress/`);
    await waitForProgress(http, `/rag/collections/${b.id}/progress/`);
    const ia = await createIndex('iso a', a.id, { ...INDEX_EMBEDDING, score_threshold: -1 });
    const ib = await createIndex('iso b', b.id, { ...INDEX_EMBEDDING, score_threshold: -1 });
    await waitForProgress(http, `/rag/indices/${ia.id}/progress/`);
    await waitForProgress(http, `/rag/indices/${ib.id}/progress/`);
    const docsA = new Set(
      ((await http.get(`/rag/collections/${a.id}/documents/`)).body as { id: string }[]).map((d) => d.id),
    );
    // A gardening query on index A: only A's (sailing) chunks come back, however poor the match.
    const fromA = await http.post(`/rag/indices/${ia.id}/retrieve/`, {
      query: 'tomato compost garden soil',
      top_k: 10,
    });
    assert.equal(fromA.status, 200);
    assert.ok(fromA.body.results.length >= 1);
    assert.ok(
      fromA.body.results.every((r: { metadata: { document_id: string } }) => docsA.has(r.metadata.document_id)),
      'index A returns only its own chunks',
    );

    assert.ok(existsSync(path.join(vectorDir, `vi_${ia.id}.lance`)));
    const del = await http.delete(`/rag/indices/${ia.id}/`);
    assert.deepEqual([del.status, del.body.message], [200, 'Vector index deleted successfully']);
    assert.equal(existsSync(path.join(vectorDir, `vi_${ia.id}.lance`)), false, 'its vectors are gone');
    for (const res of [
      await http.get(`/rag/indices/${ia.id}/`),
      await http.get(`/rag/indices/${ia.id}/progress/`),
      await http.post(`/rag/indices/${ia.id}/retrieve/`, { query: 'x' }),
      await http.delete(`/rag/indices/${ia.id}/`),
    ]) {
      assert.equal(res.status, 404);
    }
    const fromB = await http.post(`/rag/indices/${ib.id}/retrieve/`, { query: 'tomato compost garden soil', top_k: 3 });
    assert.equal(fromB.body.results[0].metadata.document_title, 'garden.txt');
    const ids = ((await http.get('/rag/indices/')).body as { id: string }[]).map((i) => i.id);
    assert.ok(ids.includes(ib.id) && !ids.includes(ia.id));
  });

  it('deletes a document (chunks and vectors), refuses to delete a collection an index uses, then deletes it; 404s after', async () => {
    const http = engine.http;
    const c = await createCollection('deletes', [
      { name: 'cook.txt', content: TOPICS.cooking },
      { name: 'stars.txt', content: TOPICS.astronomy },
    ]);
    await waitForProgress(http, `/rag/collections/${c.id}/progress/`);
    const index = await createIndex('deletes', c.id);
    await waitForProgress(http, `/rag/indices/${index.id}/progress/`);
    const docs = (await http.get(`/rag/collections/${c.id}/documents/`)).body as {
      id: string;
      chunks: unknown[];
      metadata: { source_id: string };
    }[];
    const stars = docs.find((d) => d.metadata.source_id === 'stars.txt') as (typeof docs)[number];
    const cook = docs.find((d) => d.metadata.source_id === 'cook.txt') as (typeof docs)[number];

    const gone = await http.delete(`/rag/collections/${c.id}/documents/${stars.id}/`);
    assert.deepEqual([gone.status, gone.body.message], [200, 'Document deleted successfully']);
    assert.equal((await http.delete(`/rag/collections/${c.id}/documents/${stars.id}/`)).status, 404);
    const after = (await http.get(`/rag/collections/${c.id}/`)).body;
    assert.deepEqual([after.document_count, after.chunk_count], [1, cook.chunks.length]);
    assert.equal((await http.get(`/rag/indices/${index.id}/`)).body.chunk_count, cook.chunks.length);
    const search = await http.post(`/rag/indices/${index.id}/retrieve/`, {
      query: 'telescope galaxies quasars observatory',
      top_k: 10,
      score_threshold: -1,
    });
    assert.ok(
      search.body.results.every((r: { metadata: { document_id: string } }) => r.metadata.document_id === cook.id),
      "the deleted document's vectors are gone",
    );

    const refused = await http.delete(`/rag/collections/${c.id}/`);
    assert.equal(refused.status, 409);
    assert.match(refused.body.detail, new RegExp(index.id));
    assert.equal((await http.delete(`/rag/indices/${index.id}/`)).status, 200);
    const deleted = await http.delete(`/rag/collections/${c.id}/`);
    assert.deepEqual([deleted.status, deleted.body.message], [200, 'Document collection deleted successfully']);
    for (const res of [
      await http.get(`/rag/collections/${c.id}/`),
      await http.get(`/rag/collections/${c.id}/progress/`),
      await http.get(`/rag/collections/${c.id}/documents/`),
      await http.delete(`/rag/collections/${c.id}/`),
      await http.post(
        `/rag/collections/${c.id}/documents/`,
        filesForm([{ name: 'x.txt', content: 'hello there world' }]),
      ),
      await http.delete(`/rag/collections/${c.id}/documents/${cook.id}/`),
      await http.post('/rag/indices/', { name: 'x', collection_id: c.id, embedding: INDEX_EMBEDDING }),
    ]) {
      assert.equal(res.status, 404, res.text);
    }
    assert.equal(
      await engine.api.models.RagChunkPage.countDocuments({ collection_id: c.id }),
      0,
      'no chunk left behind',
    );
  });
});

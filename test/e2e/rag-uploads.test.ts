import assert from 'node:assert/strict';
import { STAGING_PREFIX } from '../../src/db/gridfs';
import type { Engine } from '../support/engine';
import { until } from '../support/exec-log';
import type { FakeEmbeddingsServer } from '../support/fake-embeddings-server';
import { answerJson, openUpload } from '../support/open-upload';
import { filesForm, startRagEngine, waitForProgress } from '../support/rag';

const LIMIT = 4 * 1024 * 1024;
const TEXT_PROCESSING = { chunk_token_size: 2000, min_chunk_size_chars: 100 };
/** ASCII text of `bytes` bytes: sentences the chunker can cut. */
const text = (bytes: number, word: string) =>
  Buffer.from(`The ${word} sentence of this upload. `.repeat(Math.ceil(bytes / 40))).subarray(0, bytes);

describe('e2e: knowledge-base uploads stream into GridFS; over the limit is a 413 naming it', function () {
  this.timeout(300_000);
  let engine: Engine;
  let fake: FakeEmbeddingsServer;
  const db = () => engine.api.mongo.db!;
  const chunkCount = () => db().collection('rag_files.chunks').countDocuments({});
  const staged = () =>
    db()
      .collection('rag_files.files')
      .find({ filename: { $regex: `^${STAGING_PREFIX}` } })
      .toArray();
  /** Chunks of the files the tests meant to keep. */
  let settled = 0;
  let collectionId = '';

  before(async () => {
    ({ engine, fake } = await startRagEngine({ SPUR_MAX_UPLOAD_BYTES: String(LIMIT) }));
  });
  after(async () => {
    await engine?.close();
    await fake?.close();
  });

  it("a collection's file is in GridFS while its upload is still arriving; the ingest reads every byte", async () => {
    const head = text(1024 * 1024, 'first');
    const tail = text(256 * 1024, 'last');
    const metadata = JSON.stringify({ name: 'streamed', text_processing: TEXT_PROCESSING });
    const upload = openUpload(
      engine.api.baseUrl,
      '/rag/collections/',
      { metadata },
      { field: 'files', name: 'big.txt', head },
    );
    // Written through before the request has ended: not held in the api's memory.
    await until('the first chunks of the file in GridFS', async () => (await chunkCount()) > 0, 60_000);
    const answer = await upload.finish(tail);
    assert.match(answer, /^HTTP\/1\.1 200/, answer.slice(0, 300));
    collectionId = answerJson(answer).id;
    const progress = await waitForProgress(engine.http, `/rag/collections/${collectionId}/progress/`);
    assert.equal(progress.status, 'completed', JSON.stringify(progress));

    const [doc] = (await engine.http.get(`/rag/collections/${collectionId}/documents/`)).body;
    assert.equal(doc.status, 'completed', doc.error_message);
    assert.equal(doc.text, Buffer.concat([head, tail]).toString('utf8'), 'the parsed text is the whole file');
    const files = await db().collection('rag_files.files').find({ 'metadata.collection_id': collectionId }).toArray();
    assert.deepEqual(
      files.map((f) => [f.filename, f.length]),
      [['big.txt', head.length + tail.length]],
    );
    assert.deepEqual(await staged(), [], 'the file was taken, not left staged');
    settled = await chunkCount();
  });

  it('refuses a file over SPUR_MAX_UPLOAD_BYTES with 413 naming the limit; no collection, nothing staged is left', async () => {
    const metadata = JSON.stringify({ name: 'too big', text_processing: TEXT_PROCESSING });
    const upload = openUpload(
      engine.api.baseUrl,
      '/rag/collections/',
      { metadata },
      { field: 'files', name: 'huge.txt', head: text(3 * 1024 * 1024, 'big') },
    );
    const answer = await upload.finish(text(2 * 1024 * 1024, 'more'));
    assert.match(answer, /^HTTP\/1\.1 413/, answer.slice(0, 300));
    assert.match(
      answerJson(answer).detail,
      /File too large \(field 'files'\): the limit is 4 MiB per file \(SPUR_MAX_UPLOAD_BYTES\)/,
    );
    const names = (await engine.http.get('/rag/collections/')).body.map((c: { name: string }) => c.name);
    assert.deepEqual(names, ['streamed']);
    assert.deepEqual(await staged(), []);
    assert.equal(await chunkCount(), settled, 'no chunk left behind');
  });

  it('adds documents and previews chunks through the same staging: taken when used, deleted otherwise', async () => {
    const add = await engine.http.post(
      `/rag/collections/${collectionId}/documents/`,
      filesForm([{ name: 'more.txt', content: text(64 * 1024, 'added') }]),
    );
    assert.equal(add.status, 200, add.text);
    assert.equal(
      (await waitForProgress(engine.http, `/rag/collections/${collectionId}/progress/`)).status,
      'completed',
    );
    assert.equal((await engine.http.get(`/rag/collections/${collectionId}/`)).body.document_count, 2);

    const unknown = await engine.http.post(
      '/rag/collections/nope/documents/',
      filesForm([{ name: 'lost.txt', content: text(64 * 1024, 'lost') }]),
    );
    assert.equal(unknown.status, 404);

    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(text(200 * 1024, 'preview'))], { type: 'text/plain' }), 'preview.txt');
    form.append('chunking_config', JSON.stringify(TEXT_PROCESSING));
    const preview = await engine.http.post('/rag/collections/preview_chunk/', form);
    assert.equal(preview.status, 200, preview.text);
    assert.ok(preview.body.total_chunks > 1 && preview.body.chunks[0].original_text.startsWith('The preview sentence'));

    const files = await db().collection('rag_files.files').find({}).toArray();
    assert.deepEqual(
      files.map((f) => f.filename).sort(),
      ['big.txt', 'more.txt'],
      'the 404 and the preview left nothing',
    );
    const expectedChunks = await db()
      .collection('rag_files.chunks')
      .countDocuments({ files_id: { $in: files.map((f) => f._id) } });
    assert.equal(await chunkCount(), expectedChunks, 'no orphaned chunk');
  });

  it('text fields shaped as an uploaded file (files[0][gridfsId][$ne]) add nothing: 422, every stored file keeps its name and metadata', async () => {
    const stored = async () =>
      (await db().collection('rag_files.files').find({}).sort({ _id: 1 }).toArray()).map((f) =>
        JSON.stringify([f._id, f.filename, f.metadata]),
      );
    const before = await stored();
    assert.ok(before.length > 0, 'there are files to take');
    const forged = new FormData();
    // multer reads bracketed names as nested objects: a staged file whose id is a query operator.
    forged.append('files[0][gridfsId][$ne]', '');
    forged.append('files[0][originalname]', 'taken.txt');
    forged.append('files[0][mimetype]', 'text/plain');
    forged.append('files[0][size]', '1');
    const added = await engine.http.post(`/rag/collections/${collectionId}/documents/`, forged);
    assert.equal(added.status, 422, added.text);
    assert.deepEqual(await stored(), before);
    assert.equal((await engine.http.get(`/rag/collections/${collectionId}/`)).body.document_count, 2);
  });
});

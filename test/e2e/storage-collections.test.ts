import assert from 'node:assert/strict';
import { Model } from 'mongoose';
import { startApi, type TestApi } from '../support/api';

/** Spur's GridFS buckets, as the database names them. */
const BUCKETS = ['test_files', 'run_files', 'datasets', 'output_files', 'rag_files', 'rag_texts'];

describe('storage: every collection exists before the first request', function () {
  this.timeout(60_000);
  let api: TestApi;
  before(async () => {
    api = await startApi();
  });
  after(async () => {
    await api?.close();
  });

  it("a started api has created every model's collection and each file bucket's files and chunks, with the indexes a first upload would make", async () => {
    const db = api.models.conn.db;
    assert.ok(db);
    const existing = new Set((await db.listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name));
    const models = Object.values(api.models).filter(
      (m): m is typeof Model => typeof m === 'function' && m.prototype instanceof Model,
    );
    assert.equal(
      models.length,
      Object.keys(api.models).length - BUCKETS.length - 1,
      'every entry but the buckets and conn',
    );
    const missing = [
      ...models.map((m) => m.collection.collectionName),
      ...BUCKETS.flatMap((b) => [`${b}.files`, `${b}.chunks`]),
    ].filter((name) => !existing.has(name));
    assert.deepEqual(missing, [], 'created only when first written: DDL while runs go on');
    for (const bucket of BUCKETS) {
      const chunks = await db.collection(`${bucket}.chunks`).listIndexes().toArray();
      const byFile = chunks.find((i) => JSON.stringify(i.key) === JSON.stringify({ files_id: 1, n: 1 }));
      assert.equal(byFile?.unique, true, `${bucket}.chunks: ${JSON.stringify(chunks)}`);
      const files = await db.collection(`${bucket}.files`).listIndexes().toArray();
      assert.ok(
        files.some((i) => JSON.stringify(i.key) === JSON.stringify({ filename: 1, uploadDate: 1 })),
        `${bucket}.files: ${JSON.stringify(files)}`,
      );
    }
  });
});

import assert from 'node:assert/strict';
import { allModels } from '../../src/db/models';
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
    const models = allModels(api.models);
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

  it("each model's collection has every index its schema declares, with that key and uniqueness, and a second process starting on the database keeps them as they are", async () => {
    const indexesNow = async (connection: TestApi['models']['conn']) => {
      const db = connection.db;
      assert.ok(db);
      const all: Record<string, unknown[]> = {};
      for (const model of allModels(api.models)) {
        const listed = await db.collection(model.collection.collectionName).listIndexes().toArray();
        all[model.collection.collectionName] = listed
          .map((i) => ({ name: i.name, key: i.key, unique: i.unique === true }))
          .sort((a, b) => String(a.name).localeCompare(String(b.name)));
      }
      return all;
    };
    const before = await indexesNow(api.models.conn);
    let declared = 0;
    for (const model of allModels(api.models)) {
      const listed = before[model.collection.collectionName] as { name: string; key: unknown; unique: boolean }[];
      for (const [key, options] of model.schema.indexes()) {
        // The driver's name for an index not named: its fields and directions joined by underscores.
        const name = options.name ?? Object.entries(key).flat().join('_');
        const found = listed.find((i) => i.name === name);
        assert.deepEqual(
          found,
          { name, key, unique: options.unique === true },
          `${model.collection.collectionName}: ${JSON.stringify(listed)}`,
        );
        declared++;
      }
    }
    assert.ok(declared > 100, `${declared} indexes declared`);
    // What a worker or a restarted api does: prepare a database that is prepared already.
    const second = await startApi({ SPUR_MONGODB_DB: api.env.SPUR_MONGODB_DB as string });
    try {
      assert.deepEqual(await indexesNow(second.models.conn), before);
    } finally {
      await second.close(); // drops the database the first api uses: this test runs last
    }
  });
});

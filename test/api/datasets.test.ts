import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createDatasetReader } from '../../src/db/dataset-reader';
import { MAX_PIECE_CHARS, readChunk, writeChunk } from '../../src/db/dataset-row-chunks';
import { startApi, type TestApi } from '../support/api';
import { client } from '../support/http';

const FIXTURES = path.join(__dirname, '..', 'fixtures', 'datasets');
const fixture = (name: string) => readFileSync(path.join(FIXTURES, name));

function form(fileName: string, content: string | Buffer, field = 'file'): FormData {
  const fd = new FormData();
  fd.append(field, new Blob([content]), fileName);
  return fd;
}

describe('api: datasets (/ds/)', () => {
  let api: TestApi;
  let http: ReturnType<typeof client>;
  let reader: ReturnType<typeof createDatasetReader>;
  const upload = (name: string, fileName: string, content: string | Buffer) =>
    http.post(`/ds/?name=${encodeURIComponent(name)}&description=d`, form(fileName, content));
  const count = (collection: string) => api.mongo.collection(collection).countDocuments();
  const storedNothing = async () => {
    assert.deepEqual(
      [await count('datasets.files'), await count('datasets.chunks'), await count('dataset_rows')],
      [0, 0, 0],
      'no bytes or rows left behind',
    );
  };

  before(async () => {
    // Two rows per chunk so that every fixture spans chunks; a small size limit for the 413 case.
    api = await startApi({ SPUR_DATASET_ROWS_PER_CHUNK: '2', SPUR_MAX_DATASET_BYTES: '20000' });
    http = client(api.baseUrl);
    reader = createDatasetReader(api.models);
  });
  after(() => api.close());

  describe('upload formats', () => {
    afterEach(async () => {
      for (const ds of (await http.get('/ds/')).body) assert.equal((await http.delete(`/ds/${ds.id}/`)).status, 200);
      await storedNothing();
    });

    it('CSV: header row, quoted cells, values kept as strings, original bytes kept', async () => {
      const res = await upload('people', 'people.csv', fixture('people.csv'));
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.match(res.body.id, /^DS\d+$/);
      assert.deepEqual(
        { ...res.body, id: undefined, created_at: undefined, updated_at: undefined },
        {
          id: undefined,
          name: 'people',
          description: 'd',
          filename: 'people.csv',
          created_at: undefined,
          updated_at: undefined,
          row_count: 5,
          columns: ['name', 'age', 'note.text'],
        },
      );
      assert.equal(res.body.created_at, res.body.updated_at);
      const rows = await reader.readRows(res.body.id, 0, 100);
      assert.deepEqual(rows[0], { name: 'Ada', age: '36', 'note.text': 'likes engines, and math' });
      assert.deepEqual(rows[1], { name: 'Grace', age: '85', 'note.text': 'multi\nline' });
      assert.deepEqual(rows[3], { name: 'Barbara', age: '81', 'note.text': 'quote "here"' });
      assert.deepEqual(rows[4], { name: 'Ken', age: '80', 'note.text': 'unix' });
      assert.deepEqual(await reader.readRows(res.body.id, 1, 4), rows.slice(1, 4), 'a range across chunk borders');
      assert.deepEqual(await reader.readRows(res.body.id, 4, 99), rows.slice(4));
      assert.deepEqual(await reader.readRows(res.body.id, 7, 9), []);
      assert.equal(await count('dataset_rows'), 3, '5 rows in chunks of 2');
      const [file] = await api.models.datasetFiles.find().toArray();
      assert.equal(file?.length, fixture('people.csv').length);
      assert.deepEqual(await reader.getDataset(res.body.id), {
        id: res.body.id,
        name: 'people',
        columns: ['name', 'age', 'note.text'],
        row_count: 5,
      });
    });

    it('JSONL: one object per line, blank lines skipped, columns in first-seen order, odd keys kept', async () => {
      const res = await upload('jsonl', 'people.jsonl', fixture('people.jsonl'));
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.row_count, 3);
      assert.deepEqual(res.body.columns, ['name', 'age', '$tag', 'nested']);
      const rows = await reader.readRows(res.body.id, 0, 3);
      assert.deepEqual(rows[1], { name: 'Grace', age: 85, $tag: 'navy' });
      assert.deepEqual(rows[2], { name: 'Edsger', nested: { 'a.b': [1, [2]] } });
    });

    it('JSON: an array of objects, values as given', async () => {
      const res = await upload('json', 'people.json', fixture('people.json'));
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.row_count, 3);
      assert.deepEqual(res.body.columns, ['name', 'age', 'tags', 'city']);
      assert.deepEqual(await reader.readRows(res.body.id, 1, 3), [
        { name: 'Grace', age: 85, tags: ['navy'] },
        { city: 'Austin', name: 'Edsger' },
      ]);
    });

    it('Parquet: every row group read, 64-bit integers as numbers, nulls kept', async () => {
      const res = await upload('parquet', 'people.parquet', fixture('people.parquet'));
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.row_count, 5);
      assert.deepEqual(res.body.columns, ['name', 'age', 'score', 'active']);
      const rows = await reader.readRows(res.body.id, 0, 5);
      assert.deepEqual(rows[0], { name: 'Ada', age: 36, score: 9.5, active: true });
      assert.deepEqual(rows[3], { name: 'Barbara', age: 81, score: null, active: true });
      assert.deepEqual(rows[4], { name: 'Ken', age: 80, score: 6.5, active: false });
    });

    it('keeps only the base name of the uploaded file', async () => {
      const res = await upload('path', '../../etc/people.csv', 'a\n1\n');
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.filename, 'people.csv');
    });
  });

  describe('refusals', () => {
    const cases: [string, string, string | Buffer, RegExp][] = [
      ['empty file', 'e.csv', '', /The file is empty/],
      ['empty JSON file', 'e.json', '', /The file is empty/],
      ['header-only CSV', 'h.csv', 'a,b\n', /no data rows/],
      ['ragged CSV row', 'r.csv', 'a,b\n1,2\n3,4,5\n', /Line 3: 3 fields, but the header has 2/],
      ['short CSV row', 'r.csv', 'a,b\n1,2\n3\n', /Line 3: 1 field, but the header has 2/],
      ['duplicate CSV header', 'd.csv', 'a,a\n1,2\n', /Line 1: .*'a' twice/],
      ['invalid JSONL line', 'bad.jsonl', '{"a":1}\n{"a":2}\n{"a":\n', /Line 3: invalid JSON/],
      [
        'JSONL line that is not an object',
        'arr.jsonl',
        '{"a":1}\n[1,2]\n',
        /Line 2: expected a JSON object, found an array/,
      ],
      [
        'JSON that is not an array',
        'obj.json',
        '{"a":1}',
        /before the first item: the top-level value must be an array of objects/,
      ],
      [
        'JSON array of non-objects',
        'nums.json',
        '[{"a":1}, 2]',
        /Item 2 of the array: expected a JSON object, found a number/,
      ],
      ['broken JSON', 'cut.json', '[{"a":1}, {"a":', /Invalid JSON after item 1/],
      ['empty JSON array', 'none.json', '[]', /no data rows/],
      ['corrupt Parquet', 'bad.parquet', 'PAR1 this is not parquet PAR1', /Not a readable Parquet file/],
      ['truncated Parquet', 'cut.parquet', fixture('people.parquet').subarray(0, 600), /Not a readable Parquet file/],
      [
        'unknown extension',
        'notes.txt',
        'hello',
        /Unsupported file type \(extension '.txt'\): accepted extensions are .csv, .jsonl, .json, .parquet/,
      ],
      ['no extension', 'README', 'hello', /no extension/],
    ];
    for (const [what, fileName, content, message] of cases) {
      it(`422 for ${what}`, async () => {
        const res = await upload(`bad ${what}`, fileName, content);
        assert.equal(res.status, 422, JSON.stringify(res.body));
        assert.equal(res.body.detail.length, 1);
        const [detail] = res.body.detail;
        assert.deepEqual([detail.type, detail.loc], ['value_error', ['body', 'file']]);
        assert.match(detail.msg, message);
        await storedNothing();
        assert.deepEqual((await http.get('/ds/')).body, []);
      });
    }

    it('422 for a missing file part, a missing name, a file under another field', async () => {
      const noFile = await http.post('/ds/?name=x', new FormData());
      assert.equal(noFile.status, 422);
      assert.deepEqual(
        noFile.body.detail.map((d: { loc: unknown[]; type: string }) => [d.type, d.loc]),
        [['missing', ['body', 'file']]],
      );
      const notMultipart = await http.post('/ds/?name=x', { file: 'x' });
      assert.deepEqual(
        notMultipart.body.detail.map((d: { loc: unknown[] }) => d.loc),
        [['body', 'file']],
      );
      const noName = await http.post('/ds/', form('a.csv', 'a\n1\n'));
      assert.equal(noName.status, 422);
      assert.deepEqual(
        noName.body.detail.map((d: { loc: unknown[]; type: string }) => [d.type, d.loc]),
        [['missing', ['query', 'name']]],
      );
      const otherField = await http.post('/ds/?name=x', form('a.csv', 'a\n1\n', 'upload'));
      assert.equal(otherField.status, 422);
      await storedNothing();
    });

    it('413 for a second file part, removing the dataset the first one made', async () => {
      const fd = form('a.csv', 'a\n1\n');
      fd.append('file', new Blob(['b\n2\n']), 'b.csv');
      const res = await http.post('/ds/?name=two', fd);
      assert.equal(res.status, 413, JSON.stringify(res.body));
      assert.match(res.body.detail, /Too many files/);
      assert.deepEqual((await http.get('/ds/')).body, []);
      await storedNothing();
    });

    it('413 over the size limit, with nothing left in GridFS or the rows', async () => {
      const big = `a,b\n${'1234567,1234567\n'.repeat(2000)}`;
      const res = await upload('big', 'big.csv', big);
      assert.equal(res.status, 413, JSON.stringify(res.body));
      assert.match(res.body.detail, /the limit is 20000 bytes/);
      await storedNothing();
      assert.deepEqual((await http.get('/ds/')).body, []);
    });

    it('409 for a taken name, storing nothing for the refused upload', async () => {
      const first = await upload('taken', 'a.csv', 'a\n1\n');
      assert.equal(first.status, 200);
      const again = await upload('taken', 'b.jsonl', '{"b":1}\n');
      assert.equal(again.status, 409);
      assert.deepEqual(again.body, { detail: "A dataset named 'taken' already exists" });
      assert.equal(await count('datasets.files'), 1);
      assert.equal(await count('dataset_rows'), 1);
      await http.delete(`/ds/${first.body.id}/`);
    });
  });

  describe('list, get, delete, list_runs', () => {
    it('lists in storage order, gets, deletes rows and bytes, answers 404 after', async () => {
      const a = (await upload('first', 'a.csv', 'x\n1\n2\n3\n')).body;
      const b = (await upload('second', 'b.jsonl', '{"y":1}\n')).body;
      const list = await http.get('/ds/');
      assert.deepEqual(
        list.body.map((d: { id: string }) => d.id),
        [a.id, b.id],
      );
      assert.deepEqual((await http.get(`/ds/${a.id}/`)).body, a);
      const del = await http.delete(`/ds/${a.id}/`);
      assert.deepEqual([del.status, del.body], [200, { message: 'Dataset deleted' }]);
      assert.equal(await count('dataset_rows'), 1, 'only the second dataset keeps rows');
      assert.equal(await count('datasets.files'), 1);
      for (const res of [
        await http.get(`/ds/${a.id}/`),
        await http.delete(`/ds/${a.id}/`),
        await http.get(`/ds/${a.id}/list_runs/`),
      ]) {
        assert.deepEqual([res.status, res.body], [404, { detail: 'Dataset not found' }]);
      }
      await assert.rejects(reader.readRows(a.id, 0, 1), /Dataset not found/);
      await http.delete(`/ds/${b.id}/`);
      await storedNothing();
    });

    it('list_runs: [] for a fresh dataset, then its batches (parent runs, not their rows) newest first', async () => {
      const ds = (await upload('with runs', 'r.csv', 'q\nhello\n')).body;
      assert.deepEqual((await http.get(`/ds/${ds.id}/list_runs/`)).body, []);
      const run = (id: string, seq: number, start: string, dataset: string | null, parent: string | null = null) => ({
        _id: id,
        seq,
        workflow_id: 'S1',
        status: 'COMPLETED' as const,
        start_time: new Date(start),
        run_type: 'batch',
        input_dataset_id: dataset,
        parent_run_id: parent,
      });
      await api.models.Run.create([
        run('R901', 901, '2025-01-01T00:00:00Z', ds.id),
        run('R901-1', 904, '2025-01-04T00:00:00Z', ds.id, 'R901'),
        run('R902', 902, '2025-01-02T00:00:00Z', ds.id),
        run('R902-1', 905, '2025-01-05T00:00:00Z', ds.id, 'R902'),
        run('R903', 903, '2025-01-03T00:00:00Z', 'DS999'),
      ]);
      const runs = await http.get(`/ds/${ds.id}/list_runs/`);
      assert.equal(runs.status, 200);
      assert.deepEqual(
        runs.body.map((r: { id: string; input_dataset_id: string }) => [r.id, r.input_dataset_id]),
        [
          ['R902', ds.id],
          ['R901', ds.id],
        ],
      );
    });

    it('list_runs answers every batch unpaged, and pages when asked (page ≥ 1, 1 ≤ page_size ≤ 1000)', async () => {
      const ds = (await upload('paged runs', 'p.csv', 'q\nhello\n')).body;
      const run = (i: number) => ({
        _id: `R95${i}`,
        seq: 950 + i,
        workflow_id: 'S1',
        status: 'COMPLETED' as const,
        start_time: new Date(Date.UTC(2025, 0, 1 + i)),
        run_type: 'batch',
        input_dataset_id: ds.id,
      });
      await api.models.Run.create([0, 1, 2, 3, 4].map(run));
      const ids = async (q: string) =>
        (await http.get(`/ds/${ds.id}/list_runs/?${q}`)).body.map((r: { id: string }) => r.id);
      assert.deepEqual(await ids(''), ['R954', 'R953', 'R952', 'R951', 'R950']);
      assert.deepEqual(await ids('page_size=2'), ['R954', 'R953']);
      assert.deepEqual(await ids('page=2&page_size=2'), ['R952', 'R951']);
      assert.deepEqual(await ids('page=3&page_size=2'), ['R950']);
      assert.deepEqual(await ids('page=2'), []);
      for (const q of ['page=0', 'page_size=0', 'page_size=1001', 'page=x'])
        assert.equal((await http.get(`/ds/${ds.id}/list_runs/?${q}`)).status, 422, q);
    });
  });

  describe('storage', () => {
    it('splits a chunk too long for one document into pieces (never inside a surrogate pair) and reads it back', async () => {
      const long = `${'é'.repeat(MAX_PIECE_CHARS - 8)}😀${'x'.repeat(100)}`;
      await writeChunk(api.models, 'piecetest', 0, [{ a: long }, { b: 1 }]);
      assert.equal(await api.models.DatasetRow.countDocuments({ rows_key: 'piecetest' }), 2);
      assert.deepEqual(await readChunk(api.models, 'piecetest', 0), [{ a: long }, { b: 1 }]);
      await api.models.DatasetRow.deleteMany({ rows_key: 'piecetest' });
    });
  });
});

describe('api: datasets, large upload with default limits', () => {
  let api: TestApi;
  before(async () => {
    api = await startApi();
  });
  after(() => api.close());

  it('streams a 2 MB CSV into 500-row chunks and reads any range', async () => {
    const lines = Array.from({ length: 40_000 }, (_, i) => `${i},row number ${i} with some padding text`);
    const res = await client(api.baseUrl).post('/ds/?name=big', form('big.csv', `id,text\n${lines.join('\n')}\n`));
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.row_count, 40_000);
    assert.equal(await api.mongo.collection('dataset_rows').countDocuments(), 80);
    const rows = await createDatasetReader(api.models).readRows(res.body.id, 12_345, 13_005);
    assert.equal(rows.length, 660);
    assert.deepEqual(rows[0], { id: '12345', text: 'row number 12345 with some padding text' });
    assert.deepEqual(rows.at(-1), { id: '13004', text: 'row number 13004 with some padding text' });
  });
});

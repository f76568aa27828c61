import assert from 'node:assert/strict';
import { createOutputFileWriter } from '../../src/modules/output-files/output-file-writer';
import { startApi, type TestApi } from '../support/api';
import { client } from '../support/http';

describe('api: output files (/of/)', () => {
  let api: TestApi;
  let http: ReturnType<typeof client>;
  let writer: ReturnType<typeof createOutputFileWriter>;
  const count = (collection: string) => api.mongo.collection(collection).countDocuments();
  // Raw fetch: the JSON-parsing test client would choke on JSON Lines.
  const download = async (id: string) => {
    const res = await fetch(`${api.baseUrl}/of/${id}/download/`);
    return { status: res.status, headers: res.headers, text: await res.text() };
  };

  before(async () => {
    api = await startApi();
    http = client(api.baseUrl);
    writer = createOutputFileWriter(api.models);
  });
  after(() => api.close());

  it('creates, appends in order, lists, gets and downloads as an attachment', async () => {
    const { id } = await writer.createOutputFile('R7', 'output_R7.jsonl');
    assert.match(id, /^OF\d+$/);
    const empty = await download(id);
    assert.deepEqual([empty.status, empty.text], [200, ''], 'no bytes written yet: an empty body');

    await writer.appendLines(id, ['{"row":1}', '{"row":2}']);
    await writer.appendLines(id, []);
    await writer.appendLines(id, ['{"row":3,"text":"é ünïcode"}']);
    await writer.appendLines(id, ['{"row":4}']);
    assert.equal(await count('output_files.files'), 3, 'one GridFS part per non-empty append');

    const list = await http.get('/of/');
    assert.equal(list.status, 200);
    assert.deepEqual(
      list.body.map((f: { id: string; file_name: string }) => [f.id, f.file_name]),
      [[id, 'output_R7.jsonl']],
    );
    const got = await http.get(`/of/${id}/`);
    assert.deepEqual(Object.keys(got.body), ['id', 'file_name', 'created_at', 'updated_at']);
    assert.ok(got.body.updated_at >= got.body.created_at);

    const file = await download(id);
    assert.equal(file.status, 200);
    assert.equal(file.text, '{"row":1}\n{"row":2}\n{"row":3,"text":"é ünïcode"}\n{"row":4}\n');
    assert.match(file.headers.get('content-type') ?? '', /^application\/x-ndjson/);
    assert.equal(file.headers.get('content-disposition'), 'attachment; filename=output_R7.jsonl');
    assert.equal(Number(file.headers.get('content-length')), Buffer.byteLength(file.text));
  });

  it('skips a retried append with the same part number, and orders parts by number', async () => {
    const { id } = await writer.createOutputFile('R8', 'output_R8.jsonl');
    await writer.appendLines(id, ['b'], { part: 1 });
    await writer.appendLines(id, ['a'], { part: 0 });
    await writer.appendLines(id, ['a again'], { part: 0 });
    await writer.appendLines(id, ['c']);
    assert.equal((await download(id)).text, 'a\nb\nc\n');
    await assert.rejects(writer.appendLines(id, ['two\nlines']), /line break/);
    await assert.rejects(writer.appendLines('OF999999', ['x']), /Output file not found/);
  });

  it('sets the content type by suffix', async () => {
    const expected: [string, RegExp][] = [
      ['out.csv', /^text\/csv/],
      ['out.json', /^application\/json/],
      ['out.txt', /^text\/plain/],
      ['out.bin', /^application\/octet-stream/],
      ['OUT.JSONL', /^application\/x-ndjson/],
    ];
    for (const [name, type] of expected) {
      const { id } = await writer.createOutputFile(null, name);
      await writer.appendLines(id, ['x']);
      const res = await download(id);
      assert.match(res.headers.get('content-type') ?? '', type, name);
      assert.equal(res.text, 'x\n');
    }
  });

  it('quotes a file name that is not a plain token', async () => {
    const { id } = await writer.createOutputFile(null, 'my results (1).csv');
    const res = await download(id);
    assert.equal(res.headers.get('content-disposition'), 'attachment; filename="my results (1).csv"');
  });

  it('keeps Content-Disposition ASCII: other names go as filename* (raw Latin-1 bytes turn é into ý)', async () => {
    const { id } = await writer.createOutputFile(null, 'résumé 📄.jsonl');
    await writer.appendLines(id, ['{"a":1}']);
    const res = await download(id);
    assert.equal(
      res.headers.get('content-disposition'),
      `attachment; filename="resume _.jsonl"; filename*=UTF-8''r%C3%A9sum%C3%A9%20%F0%9F%93%84.jsonl`,
    );
    assert.match(
      res.headers.get('content-type') ?? '',
      /^application\/x-ndjson/,
      'the type still follows the stored name',
    );
  });

  it('deletes the bytes and unlinks runs without deleting them', async () => {
    const { id } = await writer.createOutputFile('R950', 'output_R950.jsonl');
    await writer.appendLines(id, ['{"a":1}']);
    await writer.appendLines(id, ['{"a":2}']);
    const run = (runId: string, seq: number, outputFileId: string | null) => ({
      _id: runId,
      seq,
      workflow_id: 'S1',
      status: 'COMPLETED' as const,
      start_time: new Date(),
      run_type: 'batch',
      output_file_id: outputFileId,
    });
    await api.models.Run.create([run('R950', 950, id), run('R951', 951, 'OF424242')]);
    const before = await api.models.outputFiles.find({ 'metadata.output_file_id': id }).toArray();
    assert.equal(before.length, 2);

    const res = await http.delete(`/of/${id}/`);
    assert.deepEqual([res.status, res.body], [200, { message: 'Output file deleted' }]);
    assert.equal((await api.models.outputFiles.find({ 'metadata.output_file_id': id }).toArray()).length, 0);
    for (const file of before)
      assert.equal(await api.mongo.collection('output_files.chunks').countDocuments({ files_id: file._id }), 0);
    const runs = await api.models.Run.find().sort({ seq: 1 }).lean();
    assert.deepEqual(
      runs.map((r) => [r._id, r.output_file_id]),
      [
        ['R950', null],
        ['R951', 'OF424242'],
      ],
    );
    const viaApi = await http.get('/run/R950/');
    assert.deepEqual([viaApi.status, viaApi.body.output_file_id], [200, null]);

    for (const gone of [
      await http.get(`/of/${id}/`),
      await http.get(`/of/${id}/download/`),
      await http.delete(`/of/${id}/`),
    ]) {
      assert.deepEqual([gone.status, gone.body], [404, { detail: 'Output file not found' }]);
    }
    await assert.rejects(writer.appendLines(id, ['late']), /Output file not found/);
  });
});

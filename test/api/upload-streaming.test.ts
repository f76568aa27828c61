import assert from 'node:assert/strict';
import { STAGING_PREFIX } from '../../src/db/gridfs';
import { startApi, type TestApi } from '../support/api';
import { until } from '../support/exec-log';
import { client } from '../support/http';
import { answerJson, openUpload } from '../support/open-upload';

/** Opens an upload to /wf/upload_test_files/ with `head` bytes of one file, and leaves it open. */
const startUpload = (baseUrl: string, fields: Record<string, string>, head: Buffer) =>
  openUpload(baseUrl, '/wf/upload_test_files/', fields, { field: 'files', name: 'big.bin', head });

describe('api: uploads stream into GridFS; what a failed request staged is deleted', function () {
  this.timeout(60_000);
  let api: TestApi;
  let workflowId: string;
  /** Chunks of the files the tests meant to keep. */
  let settled = 0;
  const chunks = () => api.mongo.db!.collection('test_files.chunks').countDocuments({});
  const stagedFiles = () =>
    api.mongo
      .db!.collection('test_files.files')
      .find({ filename: { $regex: `^${STAGING_PREFIX}` } })
      .toArray();

  before(async () => {
    api = await startApi({ SPUR_MAX_UPLOAD_BYTES: String(4 * 1024 * 1024) });
    workflowId = (await client(api.baseUrl).post('/wf/', { name: 'uploads' })).body.id;
  });
  after(() => api.close());

  it('a file is in GridFS while its upload is still arriving, and keeps every byte', async () => {
    const head = Buffer.alloc(1024 * 1024, 7);
    const upload = startUpload(api.baseUrl, { workflow_id: workflowId, node_id: 'n1' }, head);
    // Written through before the request has ended: not held in the api's memory.
    await until('the first chunks of the file in GridFS', async () => (await chunks()) > 0, 30_000);
    const answer = await upload.finish(Buffer.alloc(512 * 1024, 9));
    assert.match(answer, /^HTTP\/1\.1 200/, answer.slice(0, 300));
    const [path] = answerJson(answer).n1;
    const bytes = Buffer.from(await (await fetch(`${api.baseUrl}/files/${path}`)).arrayBuffer());
    assert.equal(bytes.length, head.length + 512 * 1024);
    assert.ok(
      bytes.subarray(0, head.length).every((b) => b === 7) && bytes.subarray(head.length).every((b) => b === 9),
    );
    assert.deepEqual(await stagedFiles(), [], 'the file was taken, not left staged');
    settled = await chunks();
  });

  it('leaves nothing behind when the request fails after the file was stored (unknown workflow: 404)', async () => {
    const upload = startUpload(api.baseUrl, { workflow_id: 'S999999', node_id: 'n1' }, Buffer.alloc(64 * 1024, 1));
    const answer = await upload.finish(Buffer.alloc(0));
    assert.match(answer, /^HTTP\/1\.1 404/);
    assert.deepEqual(await stagedFiles(), []);
    assert.equal(await chunks(), settled, 'no chunk left behind');
  });

  it('leaves nothing behind when a file breaks the size limit (413)', async () => {
    const upload = startUpload(
      api.baseUrl,
      { workflow_id: workflowId, node_id: 'n1' },
      Buffer.alloc(3 * 1024 * 1024, 1),
    );
    const answer = await upload.finish(Buffer.alloc(2 * 1024 * 1024, 1));
    assert.match(answer, /^HTTP\/1\.1 413/);
    assert.deepEqual(await stagedFiles(), []);
    assert.equal(await chunks(), settled, 'no chunk left behind');
  });
});

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readdirSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { REPO_ROOT } from '../../scripts/lib/tools';
import { createOutputFileWriter } from '../../src/modules/output-files/output-file-writer';
import { startApi, type TestApi } from '../support/api';
import { client } from '../support/http';
import { rawClient, type RawClient, type RawReply } from '../support/raw-http';
import { stack } from '../support/stack';

/** In every name below, so a file written anywhere on disk by this suite can be found. */
const MARK = `spurtrav${randomBytes(4).toString('hex')}`;

/** File names that try to leave their GridFS bucket, in every spelling. */
const EVIL_NAMES = [
  `../../${MARK}-up.csv`,
  `../../../../../../tmp/${MARK}-tmp.csv`,
  `..%2F..%2F${MARK}-enc.csv`,
  `%2e%2e/%2e%2e/${MARK}-dots.csv`,
  `/tmp/${MARK}-abs.csv`,
  `C:\\Windows\\${MARK}-win.csv`,
  `..\\..\\${MARK}-back.csv`,
  `\\\\server\\share\\${MARK}-unc.csv`,
  `${'a'.repeat(5_000)}${MARK}-long.csv`,
  `📄ünïcödé-${MARK}.csv`,
  `\u202e${MARK}-rtl.csv`,
  `.${MARK}-hidden.csv`,
  '..',
  '.',
  '../../etc/passwd',
];

const isPlain = (name: string) => !/[/\\\u0000-\u001f\u007f]/.test(name) && !name.startsWith('.') && name.length <= 200;

/** A stored name is one plain segment: no separators, no control characters, no leading dot. */
function assertPlainName(name: string, what: string): void {
  assert.ok(!/[/\\\u0000-\u001f\u007f]/.test(name), `${what}: ${JSON.stringify(name)}`);
  assert.ok(!name.startsWith('.'), `${what} starts with a dot: ${name}`);
  assert.ok(name.length <= 230, `${what} is ${name.length} characters long`);
}

interface FilePart {
  field: string;
  name: string;
  content: string;
  /** RFC 5987 `filename*=UTF-8''…`: how a client sends quotes, CR/LF or NUL in a file name. */
  extended?: boolean;
}

/** A multipart body written by hand: FormData would escape the names this suite needs to send as-is. */
function multipart(fields: Record<string, string>, files: FilePart[]): { body: Buffer; type: string } {
  const b = `----trav${MARK}`;
  const parts = Object.entries(fields).map(
    ([k, v]) => `--${b}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`,
  );
  for (const f of files) {
    const filename = f.extended ? `filename*=UTF-8''${encodeURIComponent(f.name)}` : `filename="${f.name}"`;
    parts.push(
      `--${b}\r\nContent-Disposition: form-data; name="${f.field}"; ${filename}\r\nContent-Type: text/csv\r\n\r\n${f.content}\r\n`,
    );
  }
  return { body: Buffer.from(`${parts.join('')}--${b}--\r\n`, 'utf8'), type: `multipart/form-data; boundary=${b}` };
}

/** Entries whose name carries MARK, under `dir` (to `depth` levels; big vendored folders skipped). */
function markedEntries(dir: string, depth: number): string[] {
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return [];
  }
  const found = entries.filter((e) => e.includes(MARK)).map((e) => path.join(dir, e));
  if (depth === 0) return found;
  for (const e of entries) {
    if (['node_modules', '.git', 'proc', 'sys', 'dev'].includes(e)) continue;
    const full = path.join(dir, e);
    if (statSync(full, { throwIfNoEntry: false })?.isDirectory()) found.push(...markedEntries(full, depth - 1));
  }
  return found;
}

/** What `Content-Disposition: attachment; …` names the file, after undoing quoting; throws on anything else. */
function attachmentName(header: string | undefined): string {
  assert.ok(header !== undefined, 'a Content-Disposition header');
  assert.ok(!/[\r\n]/.test(header), `one line: ${JSON.stringify(header)}`);
  const bare = /^attachment; filename=([\w.-]+)$/.exec(header);
  if (bare) return bare[1]!;
  const quoted = /^attachment; filename="((?:[^"\\]|\\.)*)"(?:; filename\*=UTF-8''([\w%!'()*.~-]+))?$/.exec(header);
  assert.ok(quoted, `a single well-formed filename parameter: ${JSON.stringify(header)}`);
  return quoted[2] ? decodeURIComponent(quoted[2]) : quoted[1]!.replace(/\\(.)/g, '$1');
}

describe('api: stored file names never leave GridFS; downloads never reach the disk', () => {
  let api: TestApi;
  let raw: RawClient;
  let http: ReturnType<typeof client>;
  let workflowId: string;
  const passwd = statSync('/etc/passwd', { throwIfNoEntry: false });
  const scanned: [string, number][] = [
    [REPO_ROOT, 4],
    [path.dirname(REPO_ROOT), 1],
    [os.tmpdir(), 2],
    ['/', 1],
    ['/etc', 1],
  ];

  before(async () => {
    api = await startApi({ SPUR_MAX_UPLOAD_FILES: '30' });
    raw = rawClient(api.baseUrl);
    http = client(api.baseUrl);
    workflowId = (await http.post('/wf/', { name: 'traversal target' })).body.id;
    scanned.push([stack.tmpDir, 3], [process.cwd(), 2]);
  });
  after(async () => {
    raw.close();
    await api.close();
  });

  const uploadTestFiles = (files: FilePart[]) => {
    const { body, type } = multipart({ workflow_id: workflowId, node_id: 'input_node' }, files);
    return raw.request({ method: 'POST', path: '/wf/upload_test_files/', headers: { 'content-type': type }, body });
  };
  const json = (reply: RawReply) => JSON.parse(reply.body.toString('utf8'));

  it('keeps test file names as one plain segment in the workflow folder, and serves back the same bytes', async () => {
    const files = EVIL_NAMES.map((name, i) => ({ field: 'files', name, content: `row ${i}` }));
    // NUL, CR/LF and quotes only fit in the extended form; busboy decodes them into the name.
    files.push(
      ...[`nul\u0000${MARK}.csv`, `crlf\r\nSet-Cookie: a=1\r\n${MARK}.csv`, `q"uote-${MARK}.csv`].map((name, i) => ({
        field: 'files',
        name,
        content: `ext ${i}`,
        extended: true,
      })),
    );
    const res = await uploadTestFiles(files);
    assert.equal(res.status, 200, res.body.toString());
    const paths: string[] = json(res).input_node;
    // `.` and `..` have no base name, so the parser takes those parts for text fields: not stored.
    const expected = files.filter((f) => f.name !== '.' && f.name !== '..');
    assert.equal(paths.length, expected.length);
    for (const [i, stored] of paths.entries()) {
      const match = new RegExp(`^test_files/${workflowId}/\\d{8}_\\d{6}_(.+)$`).exec(stored);
      assert.ok(match, stored);
      assertPlainName(match[1]!, `stored name of ${JSON.stringify(expected[i]!.name.slice(0, 80))}`);
      if (isPlain(expected[i]!.name))
        assert.equal(match[1], expected[i]!.name, 'a plain name (unicode included) is kept as given');
      const fileName = stored.split('/')[2]!;
      const back = await raw.request({
        method: 'GET',
        path: `/files/test_files/${workflowId}/${encodeURIComponent(fileName)}`,
      });
      assert.equal(back.status, 200, stored);
      assert.equal(back.body.toString(), expected[i]!.content, 'the uploaded bytes, from GridFS');
      assert.equal(back.headers['set-cookie'], undefined);
      assert.equal(attachmentName(back.headers['content-disposition']), fileName);
    }
    const stored = await api.mongo.collection('test_files.files').find().toArray();
    for (const f of stored)
      assert.match(
        f.filename as string,
        new RegExp(`^test_files/${workflowId}/\\d{8}_\\d{6}_[^/\\\\\\u0000-\\u001f]+$`),
      );
  });

  it('refuses a raw NUL inside a multipart header as a malformed body (400), storing nothing', async () => {
    const before = await api.mongo.collection('test_files.files').countDocuments();
    const res = await uploadTestFiles([{ field: 'files', name: `a\u0000${MARK}.csv`, content: 'x' }]);
    assert.equal(res.status, 400, res.body.toString());
    assert.equal(await api.mongo.collection('test_files.files').countDocuments(), before);
  });

  it('keeps dataset file names as their base name (or refuses the format with 422); the dataset name is data', async () => {
    for (const [i, name] of EVIL_NAMES.entries()) {
      const { body, type } = multipart({}, [{ field: 'file', name, content: 'question\nhi\n' }]);
      const res = await raw.request({
        method: 'POST',
        path: `/ds/?name=${encodeURIComponent(`../../${MARK}/ds-${i}`)}`,
        headers: { 'content-type': type },
        body,
      });
      assert.ok(
        [200, 422].includes(res.status),
        `${name.slice(0, 80)} → ${res.status} ${res.body.toString().slice(0, 300)}`,
      );
      if (res.status === 422) {
        // `.` and `..` have no base name, so the parser takes the part for a text field: no file.
        const [detail] = json(res).detail;
        if (name === '.' || name === '..') assert.equal(detail.type, 'missing');
        else assert.match(detail.msg, /Unsupported file type/, 'refused for its format, not its path');
        continue;
      }
      const ds = json(res);
      assertPlainName(ds.filename, `dataset file name of ${JSON.stringify(name.slice(0, 80))}`);
      assert.ok(ds.filename.endsWith('.csv'));
      if (isPlain(name)) assert.equal(ds.filename, name, 'a plain name (unicode included) is kept as given');
      assert.equal(ds.name, `../../${MARK}/ds-${i}`, 'the name is stored as given, as text');
    }
    for (const f of await api.mongo.collection('datasets.files').find().toArray())
      assertPlainName(f.filename as string, 'GridFS dataset file name');
  });

  it('never answers a traversal path with a file from disk', async () => {
    // The docs assets are the one route that reads the disk: it works, so the refusals below mean something.
    const css = await raw.request({ method: 'GET', path: '/docs/swagger-ui.css' });
    assert.equal(css.status, 200);
    const up = ['..', '%2e%2e', '%2E%2E', '.%2e', '..%2f..', '..%252f..', '%c0%ae%c0%ae', '..%5c..'];
    const targets = [
      'etc/passwd',
      'package.json',
      'src/config/env.ts',
      '.data/secret.key',
      'node_modules/swagger-ui-dist/swagger-ui.css',
    ];
    const paths: string[] = [];
    for (const u of up) {
      const climb = Array.from({ length: 8 }, () => u).join('/');
      const climbEncoded = Array.from({ length: 8 }, () => u).join('%2F');
      for (const t of targets) {
        paths.push(
          `/files/test_files/${workflowId}/${climb}/${t}`,
          `/files/test_files/${workflowId}/${climbEncoded}%2F${encodeURIComponent(t)}`,
          `/files/${climb}/${t}`,
          `/files/test_files/${climbEncoded}/${encodeURIComponent(t)}`,
          `/of/${climbEncoded}%2F${encodeURIComponent(t)}/download/`,
          `/of/${u}/download/`,
          `/docs/${climbEncoded}%2F${encodeURIComponent(t)}`,
          `/docs/${climb}/${t}`,
          `/docs/${u}%2Fswagger-ui.css`,
          `/ds/${climbEncoded}%2F${encodeURIComponent(t)}/`,
          `/wf/${climb}/${t}`,
        );
      }
    }
    paths.push(
      '/files/test_files/%00/%00',
      `/files/test_files/${workflowId}/%00..%2F..%2Fpackage.json`,
      '/docs/swagger-ui.css%00.png',
      '/docs/%2Fetc%2Fpasswd',
    );
    const disk = /root:x?:0:0|"name": "spur"|SPUR_|swagger-ui/;
    for (const p of paths) {
      const res = await raw.request({ method: 'GET', path: p });
      assert.ok([404, 422].includes(res.status), `${p} → ${res.status}`);
      assert.doesNotMatch(res.body.toString('latin1'), disk, p);
    }
  });

  it('keeps Content-Disposition one well-formed header whatever the stored name', async () => {
    const writer = createOutputFileWriter(api.models);
    const names = [
      'evil\r\nSet-Cookie: a=1\r\n.csv',
      'q"uote.csv',
      'a;filename="b.exe".csv',
      'résumé.jsonl',
      '📄.csv',
      'back\\slash.csv',
      'tab\there.csv',
      '../../x.csv',
    ];
    for (const name of names) {
      const { id } = await writer.createOutputFile(null, name);
      await writer.appendLines(id, ['{"a":1}']);
      const res = await raw.request({ method: 'GET', path: `/of/${id}/download/` });
      assert.equal(res.status, 200, name);
      assert.equal(res.headers['set-cookie'], undefined, name);
      const shown = attachmentName(res.headers['content-disposition']);
      assertPlainName(shown, `download name of ${JSON.stringify(name)}`);
      assert.equal(shown, (await http.get(`/of/${id}/`)).body.file_name, 'the stored (cleaned) name');
    }
  });

  it('wrote nothing to disk: no file carrying the marker anywhere, /etc/passwd untouched', () => {
    const found = scanned.flatMap(([dir, depth]) => markedEntries(dir, depth));
    assert.deepEqual(found, []);
    const now = statSync('/etc/passwd', { throwIfNoEntry: false });
    assert.deepEqual([now?.size, now?.mtimeMs], [passwd?.size, passwd?.mtimeMs]);
  });
});

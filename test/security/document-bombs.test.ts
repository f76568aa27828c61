import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import type { SplitEngine } from '../support/engine';
import type { FakeEmbeddingsServer } from '../support/fake-embeddings-server';
import { GiB, MiB, docxBomb, parquetBomb, pdfBomb, slowDocx } from '../support/document-bombs';
import { client, type Reply } from '../support/http';
import { startApi, type TestApi } from '../support/api';
import { collectionForm, startSplitRagEngine, waitForProgress } from '../support/rag';
import { makeDocx, makePdf } from '../support/rag-fixtures';

/**
 * Uploaded documents are hostile: a DOCX (a ZIP), a PDF's FlateDecode streams and Parquet pages
 * can be a few MB on the wire and gigabytes once inflated. They are parsed on parse threads, within
 * SPUR_PARSE_MAX_BYTES of decompressed content, SPUR_PARSE_TIMEOUT_SECONDS and a heap limit, in
 * the api (chunk previews, datasets) as in the worker (ingest jobs).
 */

const MAX_BYTES = 32 * MiB;
/**
 * The time limit of the api that refuses the slow documents. The bombs go to apis with a limit far
 * beyond what refusing them takes even on a host running six test files on two cores: what those
 * tests check is the byte limit, which must not lose a race against the clock.
 */
const TIMEOUT_SECONDS = 5;
const AMPLE_TIMEOUT_SECONDS = 120;
/**
 * How much the peak resident memory of a process may rise while it refuses the bombs: below what
 * each inflates to (INFLATED), so a process that inflated a bomb whole could not pass.
 */
const MEMORY_RISE_BOUND = 384 * MiB;
/** The Parquet bomb: this many rows of 1 MiB, each row group of 16 rows built in turn. */
const PARQUET_ROWS = 512;
/** What each bomb inflates to, from how it is built. */
const INFLATED = { docx: GiB, pdf: GiB, parquet: PARQUET_ROWS * MiB } as const;
const CHUNKING = {
  chunk_token_size: 200,
  min_chunk_size_chars: 50,
  min_chunk_length_to_embed: 5,
  embeddings_batch_size: 16,
  max_num_chunks: 1000,
  use_vision_model: false,
};
/** What the api answers an upload it refuses. */
type Refusal = Reply<{ detail: string }>;
const BYTES_SETTING = /limit of 32 MiB \(SPUR_PARSE_MAX_BYTES\)/;

/** Peak resident memory of a process (VmHWM), in bytes. */
function peakRss(pid: number): number {
  const kib = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Number(kib) * 1024;
}

/** Starts a new peak at the process's current resident memory (Linux: clear_refs 5), and returns that. */
function restartPeak(pid: number): number {
  writeFileSync(`/proc/${pid}/clear_refs`, '5');
  return peakRss(pid);
}

describe('security: uploaded documents cannot exhaust or stall the api or the worker (decompression bombs)', function () {
  this.timeout(300_000);
  let engine: SplitEngine;
  /** An api of its own with the short time limit, for the slow documents. */
  let strict: TestApi;
  let fake: FakeEmbeddingsServer;
  let bombs: Record<'docx' | 'lyingDocx' | 'pdf' | 'parquet', Buffer>;

  before(async () => {
    // Built before any measurement: each is a few MB on the wire and 1 GiB inflated (Parquet: 512 MiB).
    bombs = {
      docx: docxBomb(INFLATED.docx),
      lyingDocx: docxBomb(INFLATED.docx, 4096),
      pdf: pdfBomb(INFLATED.pdf),
      parquet: parquetBomb(PARQUET_ROWS, MiB),
    };
    ({ engine, fake } = await startSplitRagEngine({
      SPUR_PARSE_MAX_BYTES: String(MAX_BYTES),
      SPUR_PARSE_TIMEOUT_SECONDS: String(AMPLE_TIMEOUT_SECONDS),
    }));
    strict = await startApi({
      SPUR_PARSE_MAX_BYTES: String(MAX_BYTES),
      SPUR_PARSE_TIMEOUT_SECONDS: String(TIMEOUT_SECONDS),
      SPUR_LOG_LEVEL: 'error',
    });
  });
  after(async () => {
    await strict?.close();
    await engine?.close();
    await fake?.close();
  });

  const preview = (name: string, content: Buffer, http = engine.http) => {
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(content)], { type: 'application/octet-stream' }), name);
    form.append('chunking_config', JSON.stringify(CHUNKING));
    return http.post('/rag/collections/preview_chunk/', form);
  };

  /** The api's answer to a bomb, and how far the peak memory of the api's process (this one) rose meanwhile. */
  async function refusedInApi(send: () => Promise<Refusal>): Promise<{ res: Refusal; rise: number }> {
    const before = restartPeak(process.pid);
    const res = await send();
    return { res, rise: peakRss(process.pid) - before };
  }

  describe('chunk previews parse in the api', () => {
    it('a DOCX whose document.xml inflates to 1 GiB: 413 naming SPUR_PARSE_MAX_BYTES, refused from its declared sizes before inflating', async () => {
      assert.ok(bombs.docx.length < 4 * MiB, `the bomb is ${bombs.docx.length} bytes on the wire`);
      const { res, rise } = await refusedInApi(() => preview('bomb.docx', bombs.docx));
      assert.equal(res.status, 413, res.text);
      assert.match(
        res.body.detail,
        /bomb\.docx: its ZIP entries declare 1 GiB when uncompressed, more than the limit of 32 MiB \(SPUR_PARSE_MAX_BYTES\); nothing was inflated/,
      );
      assert.ok(rise < MEMORY_RISE_BOUND, `the api's peak memory rose by ${Math.round(rise / MiB)} MiB`);
    });

    it('a DOCX whose ZIP headers claim 4 KiB for a 1 GiB document.xml: 413, inflated no further than the claim', async () => {
      const { res, rise } = await refusedInApi(() => preview('liar.docx', bombs.lyingDocx));
      assert.equal(res.status, 413, res.text);
      assert.match(
        res.body.detail,
        /liar\.docx: the ZIP entry word\/document\.xml inflates to more than the 4 KiB its headers declare/,
      );
      assert.ok(rise < MEMORY_RISE_BOUND, `the api's peak memory rose by ${Math.round(rise / MiB)} MiB`);
    });

    it('a PDF whose FlateDecode content stream inflates to 1 GiB: 413 naming SPUR_PARSE_MAX_BYTES', async () => {
      assert.ok(bombs.pdf.length < 4 * MiB, `the bomb is ${bombs.pdf.length} bytes on the wire`);
      const { res, rise } = await refusedInApi(() => preview('bomb.pdf', bombs.pdf));
      assert.equal(res.status, 413, res.text);
      assert.match(
        res.body.detail,
        /bomb\.pdf: its PDF streams decompress to more than the limit of 32 MiB \(SPUR_PARSE_MAX_BYTES\)/,
      );
      assert.ok(rise < MEMORY_RISE_BOUND, `the api's peak memory rose by ${Math.round(rise / MiB)} MiB`);
    });

    /**
     * Sends the request, waits until its parse is on a parse thread (this test runs in the api's
     * process), then asks GET /api/health; records which answer arrives first.
     */
    async function healthDuringParse(send: () => Promise<Refusal>): Promise<{ res: Refusal; order: string[] }> {
      const order: string[] = [];
      let settled = false;
      const request = send().then((res) => {
        order.push('upload');
        settled = true;
        return res;
      });
      const parser = strict.services.parser;
      while (parser.running() === 0 && !settled) await new Promise((resolve) => setImmediate(resolve));
      assert.ok(!settled, 'the upload was answered before its parse ever ran on a parse thread');
      const health = await client(strict.baseUrl).get('/health');
      order.push(`health ${health.status}`);
      return { res: await request, order };
    }

    it('a PDF and a DOCX that take longer than SPUR_PARSE_TIMEOUT_SECONDS: 413 naming it; GET /api/health sent meanwhile is answered first', async () => {
      const strictHttp = client(strict.baseUrl);
      const pdf = await healthDuringParse(() => preview('slow.pdf', pdfBomb(6 * MiB), strictHttp));
      assert.deepEqual(pdf.order, ['health 200', 'upload']);
      assert.equal(pdf.res.status, 413, pdf.res.text);
      assert.match(
        pdf.res.body.detail,
        /slow\.pdf: parsing took longer than the limit of 5 s \(SPUR_PARSE_TIMEOUT_SECONDS\)/,
      );

      const docx = await healthDuringParse(() => preview('slow.docx', slowDocx(8 * MiB), strictHttp));
      assert.deepEqual(docx.order, ['health 200', 'upload']);
      assert.equal(docx.res.status, 413, docx.res.text);
      assert.match(
        docx.res.body.detail,
        /slow\.docx: parsing took longer than the limit of 5 s \(SPUR_PARSE_TIMEOUT_SECONDS\)/,
      );
    });

    it('after the bombs, normal PDF and DOCX files still preview', async () => {
      // The same process's parse threads served the bombs and the slow documents (one pool per process).
      const fine = makePdf([['A normal first page. It has two sentences.'], ['And a second page.']]);
      const pdf = await preview('fine.pdf', fine);
      assert.equal(pdf.status, 200, pdf.text);
      assert.match(pdf.body.chunks[0].original_text, /A normal first page/);
      const docx = await preview('fine.docx', await makeDocx(['A normal paragraph of a normal document.']));
      assert.equal(docx.status, 200, docx.text);
      assert.match(docx.body.chunks[0].original_text, /A normal paragraph/);
    });
  });

  it('every bomb inflates to more than the memory rise allowed while refusing it: a process that inflated one whole would fail', () => {
    for (const [name, bytes] of Object.entries(INFLATED))
      assert.ok(
        bytes > MEMORY_RISE_BOUND,
        `${name} inflates to ${bytes / MiB} MiB, not above ${MEMORY_RISE_BOUND / MiB} MiB`,
      );
  });

  it('datasets: a Parquet file whose gzip pages inflate to 512 MiB is refused with 413 before a page is decompressed; nothing is stored', async () => {
    assert.ok(bombs.parquet.length < MiB, `the bomb is ${bombs.parquet.length} bytes on the wire`);
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(bombs.parquet)]), 'bomb.parquet');
    const { res, rise } = await refusedInApi(() => engine.http.post('/ds/?name=bomb&description=d', form));
    assert.equal(res.status, 413, res.text);
    assert.match(
      res.body.detail,
      /bomb\.parquet: its row groups declare 512 MiB when uncompressed, more than the limit of 32 MiB \(SPUR_PARSE_MAX_BYTES\); nothing was decompressed/,
    );
    assert.ok(rise < MEMORY_RISE_BOUND, `the api's peak memory rose by ${Math.round(rise / MiB)} MiB`);
    assert.deepEqual((await engine.http.get('/ds/')).body, []);
    const stored = await Promise.all(
      ['datasets.files', 'dataset_rows'].map((c) => engine.api.mongo.collection(c).countDocuments()),
    );
    assert.deepEqual(stored, [0, 0], 'no bytes or rows left behind');
  });

  it("an ingest job in the worker fails each bomb as a document naming the limit, keeps the worker's memory bounded, and ingests the normal file beside them", async () => {
    const workerPid = engine.worker.process.pid;
    const before = restartPeak(workerPid);
    const res = await engine.http.post(
      '/rag/collections/',
      collectionForm({ name: 'bombs', text_processing: CHUNKING }, [
        { name: 'bomb.docx', content: bombs.docx },
        { name: 'liar.docx', content: bombs.lyingDocx },
        { name: 'bomb.pdf', content: bombs.pdf },
        { name: 'notes.txt', content: 'A perfectly ordinary note about sailing boats and harbours.' },
      ]),
    );
    assert.equal(res.status, 200, res.text);
    const progress = await waitForProgress(engine.http, `/rag/collections/${res.body.id}/progress/`);
    const rise = peakRss(workerPid) - before;
    assert.equal(progress.status, 'completed', JSON.stringify(progress));
    const docs = (await engine.http.get(`/rag/collections/${res.body.id}/documents/`)).body as {
      metadata: { title: string };
      status: string;
      error_message: string | null;
      chunks: unknown[];
    }[];
    const byName = Object.fromEntries(docs.map((d) => [d.metadata.title, d]));
    for (const [name, message] of [
      [
        'bomb.docx',
        /bomb\.docx: its ZIP entries declare 1 GiB when uncompressed, more than the limit of 32 MiB \(SPUR_PARSE_MAX_BYTES\)/,
      ],
      [
        'liar.docx',
        /liar\.docx: the ZIP entry word\/document\.xml inflates to more than the 4 KiB its headers declare/,
      ],
      ['bomb.pdf', BYTES_SETTING],
    ] as const) {
      assert.equal(byName[name]?.status, 'failed', `${name}: ${JSON.stringify(byName[name])}`);
      assert.match(byName[name]?.error_message ?? '', message);
      assert.deepEqual(byName[name]?.chunks, []);
    }
    assert.equal(byName['notes.txt']?.status, 'completed');
    assert.equal(byName['notes.txt']?.chunks.length, 1);
    assert.ok(rise < MEMORY_RISE_BOUND, `the worker's peak memory rose by ${Math.round(rise / MiB)} MiB`);
  });
});

import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import { Types } from 'mongoose';
import { hashApiKey } from '../../src/http/api-keys';
import { runDocument } from '../../src/db/runs/run-documents';
import { startApi, type TestApi } from '../support/api';
import { client } from '../support/http';
import { openSse, type SseStream } from '../support/sse';

/** What PySpur pages itself (page_size ≤ 100), what it answers whole (≤ 1000 here), and a collection's documents. */
const SPEC_MAX = 100;
const WHOLE_MAX = 1000;
const DOCUMENTS_MAX = 100;

const range = (n: number) => Array.from({ length: n }, (_, i) => i);
const at = (i: number) => new Date(Date.UTC(2025, 0, 1) + i * 1000);

/** Polls `condition` (a state of the server) until it holds; fails after `ms`. */
async function until(condition: () => boolean, what: string, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`not reached in ${ms} ms: ${what}`);
    await delay(20);
  }
}

describe('security: listings are paged and event streams are limited', function () {
  this.timeout(180_000);

  describe('listings', () => {
    let api: TestApi;
    let http: ReturnType<typeof client>;
    const ids = { workflow: '', run: 'R700000', dataset: 'DS700000', collection: 'DC700000' };

    /** More of every record than a page may hold, written straight to the database (the api would take minutes). */
    async function seed(): Promise<void> {
      const m = api.models;
      const wf = (await http.post('/wf/', { name: 'listed' })).body as { id: string };
      ids.workflow = wf.id;
      const definition = (await m.Workflow.findById(wf.id).lean())?.definition as string;
      const over = (max: number) => range(max + 1);
      await m.Workflow.insertMany(
        over(SPEC_MAX).map((i) => ({
          _id: `S70${i}`,
          seq: 700_000 + i,
          name: `wf ${i}`,
          definition,
          created_at: at(i),
          updated_at: at(i),
        })),
      );
      await m.WorkflowVersion.insertMany(
        over(SPEC_MAX).map((i) => ({
          _id: `SV70${i}`,
          seq: 700_000 + i,
          workflow_id: wf.id,
          version: 100 + i,
          name: 'listed',
          definition,
          definition_hash: `h${i}`,
          created_at: at(i),
          updated_at: at(i),
        })),
      );
      const runId = (i: number) => `R70${String(i).padStart(4, '0')}`;
      await m.Run.insertMany(
        over(SPEC_MAX).map((i) =>
          runDocument({
            id: runId(i),
            seq: 700_000 + i,
            workflowId: wf.id,
            workflowVersionId: `SV70${i}`,
            runType: 'batch',
            initialInputs: {},
            status: 'PAUSED',
            startTime: at(i),
            inputDatasetId: ids.dataset,
          }),
        ),
      );
      await m.Pause.insertMany(
        over(SPEC_MAX).map((i) => ({
          _id: `${runId(i)}:gate:1`,
          run_id: runId(i),
          node_id: 'gate',
          pause_message: 'check',
          pause_time: at(i),
        })),
      );
      await m.Pause.insertMany(
        over(WHOLE_MAX).map((i) => ({
          _id: `${ids.run}:loop:${i + 2}`,
          run_id: ids.run,
          node_id: 'loop',
          pause_message: 'again',
          pause_time: at(i),
          resume_time: at(i),
        })),
      );
      await m.CallbackDelivery.insertMany(
        over(WHOLE_MAX).map((i) => ({
          _id: `${ids.run}:run.paused:${i + 1}`,
          run_id: ids.run,
          event: 'run.paused',
          url: 'http://127.0.0.1:9/',
          status: 'delivered',
          created_at: at(i),
          updated_at: at(i),
          attempts: [],
        })),
      );
      const common = (i: number) => ({ seq: 700_000 + i, created_at: at(i), updated_at: at(i) });
      await m.Dataset.insertMany(
        over(WHOLE_MAX).map((i) => ({
          _id: `DS70${String(i).padStart(4, '0')}`,
          ...common(i),
          name: `ds ${i}`,
          filename: 'd.csv',
          format: 'csv',
          row_count: 0,
          chunk_size: 500,
          byte_size: 0,
          file_id: new Types.ObjectId(),
          rows_key: `k${i}`,
        })),
      );
      await m.OutputFile.insertMany(
        over(WHOLE_MAX).map((i) => ({ _id: `OF70${i}`, ...common(i), file_name: `o${i}.jsonl`, parts: [] })),
      );
      const progress = (i: number) => ({ status: 'completed', created_at: at(i), updated_at: at(i) });
      await m.RagCollection.insertMany(
        over(WHOLE_MAX).map((i) => ({
          _id: `DC70${String(i).padStart(4, '0')}`,
          ...common(i),
          name: `kb ${i}`,
          status: 'ready',
          text_processing_json: '{}',
          progress: progress(i),
        })),
      );
      const embedding = JSON.stringify({ model: 'openai/text-embedding-3-small', vector_db: 'lancedb' });
      await m.VectorIndex.insertMany(
        over(WHOLE_MAX).map((i) => ({
          _id: `VI70${i}`,
          ...common(i),
          name: `vi ${i}`,
          collection_id: ids.collection,
          status: 'ready',
          embedding_json: embedding,
          dimensions: 3,
          progress: progress(i),
        })),
      );
      await m.RagDocument.insertMany(
        over(DOCUMENTS_MAX).map((i) => ({
          _id: `DOC70${i}`,
          ...common(i),
          collection_id: ids.collection,
          filename: `d${i}.txt`,
          byte_size: 1,
          file_id: new Types.ObjectId(),
          status: 'completed',
        })),
      );
      // Files of both buckets, their times interleaved: the listing merges the two.
      const file = (kind: string, i: number) => ({
        _id: new Types.ObjectId(),
        length: i,
        chunkSize: 255 * 1024,
        uploadDate: at(i),
        filename: `${kind}/${wf.id}/f${i}`,
        metadata: { workflow_id: wf.id },
      });
      await api.mongo.collection('run_files.files').insertMany(
        over(WHOLE_MAX)
          .filter((i) => i % 3 !== 0)
          .map((i) => file('run_files', i)),
      );
      await api.mongo.collection('test_files.files').insertMany(
        over(WHOLE_MAX)
          .filter((i) => i % 3 === 0)
          .map((i) => file('test_files', i)),
      );
      await m.User.insertMany(
        over(SPEC_MAX).map((i) => ({ _id: `U70${i}`, ...common(i), external_id: `u${i}`, user_metadata: '{}' })),
      );
      await m.Session.insertMany(
        over(SPEC_MAX).map((i) => ({ _id: `SN70${i}`, ...common(i), user_id: 'U700', workflow_id: wf.id })),
      );
    }

    before(async () => {
      api = await startApi();
      http = client(api.baseUrl);
      await seed();
    });
    after(() => api?.close());

    /** An answer's items: the array, or the array under `key` (deliveries, users, sessions). */
    async function itemsOf(path: string, key?: string): Promise<unknown[]> {
      const res = await http.get(path);
      assert.equal(res.status, 200, `${path}: ${res.text.slice(0, 300)}`);
      const items: unknown = key ? (res.body as Record<string, unknown>)[key] : res.body;
      assert.ok(Array.isArray(items), `${path} answers a list`);
      return items;
    }

    /** A query parameter out of bounds or not an integer is a 422 naming it, and nothing is listed. */
    async function assertRefused(path: string, query: string, param: string, type: string): Promise<void> {
      const res = await http.get(`${path}${path.includes('?') ? '&' : '?'}${query}`);
      assert.equal(res.status, 422, `${path}?${query}: ${res.text.slice(0, 300)}`);
      const detail = (res.body as { detail: { loc: string[]; type: string }[] }).detail;
      assert.deepEqual(
        detail.map((d) => [d.loc, d.type]),
        [[['query', param], type]],
        `${path}?${query}`,
      );
      assert.ok(!res.text.includes('"id"'), 'no record in the refusal');
    }

    async function assertPaging(
      path: string,
      max: number,
      items: (p: string) => Promise<unknown[]>,
      sizeParam = 'page_size',
    ): Promise<void> {
      for (const huge of [max + 1, 1_000_000_000])
        await assertRefused(path, `${sizeParam}=${huge}`, sizeParam, 'less_than_equal');
      await assertRefused(path, `${sizeParam}=0`, sizeParam, 'greater_than_equal');
      await assertRefused(path, `${sizeParam}=1e9`, sizeParam, 'int_parsing');
      if (sizeParam === 'page_size') {
        await assertRefused(path, 'page=0', 'page', 'greater_than_equal');
        await assertRefused(path, 'page=x', 'page', 'int_parsing');
      }
      assert.equal(
        (await items(`${path}${path.includes('?') ? '&' : '?'}${sizeParam}=${max}`)).length,
        max,
        `${path}: a full page of ${max} (more are stored)`,
      );
    }

    it('the listings PySpur pages keep its bounds: page_size over 100 is a 422 naming it, and no answer holds more than 100 of the 101 stored', async () => {
      const paged = [
        '/wf/',
        `/wf/${ids.workflow}/versions/`,
        `/wf/${ids.workflow}/runs/`,
        '/run/?parent_only=false',
        '/wf/paused_workflows/',
      ];
      for (const path of paged) {
        assert.equal((await itemsOf(path)).length, 10, `${path}: PySpur's default page of 10`);
        await assertPaging(path, SPEC_MAX, (p) => itemsOf(p));
      }
      await assertPaging('/wf/paused_workflows/', SPEC_MAX, (p) => itemsOf(p));
    });

    it("a dataset's runs (its 101 batches) come whole without paging, paged when asked; page_size over 1000 is a 422", async () => {
      const path = `/ds/${ids.dataset}/list_runs/`;
      assert.equal((await itemsOf(path)).length, SPEC_MAX + 1);
      assert.equal((await itemsOf(`${path}?page=2&page_size=${SPEC_MAX}`)).length, 1);
      await assertRefused(path, `page_size=${WHOLE_MAX + 1}`, 'page_size', 'less_than_equal');
      await assertRefused(path, 'page=0', 'page', 'greater_than_equal');
    });

    it("users and sessions keep PySpur's skip/limit: limit over 100 is a 422, and at most 100 of the 101 stored are answered", async () => {
      for (const [path, key] of [
        ['/user/', 'users'],
        ['/session/', 'sessions'],
      ] as const) {
        await assertPaging(path, SPEC_MAX, (p) => itemsOf(p, key), 'limit');
        assert.equal((await itemsOf(`${path}?skip=${SPEC_MAX}&limit=${SPEC_MAX}`, key)).length, 1);
      }
    });

    it('the listings PySpur answers whole answer at most 1000 of the 1001 stored, the rest on page 2; page_size over 1000 is a 422', async () => {
      const whole: [string, string?][] = [
        ['/ds/'],
        ['/of/'],
        ['/files/'],
        [`/files/${ids.workflow}`],
        ['/rag/collections/'],
        ['/rag/indices/'],
        [`/wf/pause_history/${ids.run}/`],
        [`/run/${ids.run}/callbacks/`, 'deliveries'],
      ];
      for (const [path, key] of whole) {
        const first = await itemsOf(path, key);
        assert.equal(first.length, WHOLE_MAX, `${path}: the first ${WHOLE_MAX} without paging`);
        assert.ok((await itemsOf(`${path}?page=2`, key)).length >= 1, `${path}: the rest on page 2`);
        await assertPaging(path, WHOLE_MAX, (p) => itemsOf(p, key));
      }
    });

    it("a collection's documents (each with its text and chunks) come at most 100 per page", async () => {
      const path = `/rag/collections/${ids.collection}/documents/`;
      assert.equal((await itemsOf(path)).length, DOCUMENTS_MAX);
      assert.equal((await itemsOf(`${path}?page=2`)).length, 1);
      await assertPaging(path, DOCUMENTS_MAX, (p) => itemsOf(p));
    });

    it('files of both buckets are paged newest first as one list', async () => {
      const all = [...(await itemsOf('/files/?page_size=600')), ...(await itemsOf('/files/?page=2&page_size=600'))] as {
        path: string;
        created: string;
      }[];
      assert.equal(all.length, WHOLE_MAX + 1);
      const expected = range(WHOLE_MAX + 1)
        .reverse()
        .map((i) => `${i % 3 === 0 ? 'test_files' : 'run_files'}/${ids.workflow}/f${i}`);
      assert.deepEqual(
        all.map((f) => f.path),
        expected,
      );
    });
  });

  describe('event streams', () => {
    /** A run that stays RUNNING with no events (no worker): its streams stay open, with nothing to send. */
    async function idleRun(api: TestApi, n: number): Promise<string> {
      const id = `R71${String(n).padStart(4, '0')}`;
      await api.models.Run.create(
        runDocument({
          id,
          seq: 710_000 + n,
          workflowId: 'S1',
          workflowVersionId: null,
          runType: 'interactive',
          initialInputs: {},
          status: 'RUNNING',
        }),
      );
      return id;
    }
    const open = (api: TestApi, runId: string, as: { address?: string; key?: string }) =>
      openSse(
        `${api.baseUrl}/run/${runId}/events/`,
        as.key ? { Authorization: `Bearer ${as.key}` } : {},
        as.address ? { localAddress: as.address } : {},
      );
    const counts = (api: TestApi) => ({
      slots: api.services.streamSlots.stats().open,
      subscribers: api.services.runEvents.stats().streams,
    });

    async function assertRefused(stream: SseStream, limit: RegExp): Promise<void> {
      await stream.ended;
      assert.equal(stream.status, 429, stream.body());
      const retryAfter = Number(stream.headers['retry-after']);
      assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1, `Retry-After ${stream.headers['retry-after']}`);
      assert.match(String(stream.headers['content-type']), /^application\/json/);
      assert.match(stream.body(), limit);
    }

    // No keep-alive for the test's life: a disconnect can only be noticed by the socket closing.
    const quiet = { SPUR_EVENT_STREAM_KEEPALIVE_SECONDS: '3600' };

    it('without keys, a client (an address) past SPUR_EVENT_STREAMS_PER_CLIENT gets 429 and no watcher, while another address still gets a stream', async () => {
      const api = await startApi({ ...quiet, SPUR_EVENT_STREAMS_PER_CLIENT: '2', SPUR_EVENT_STREAMS_MAX: '100' });
      const streams: SseStream[] = [];
      try {
        const run = await idleRun(api, 1);
        for (let i = 0; i < 2; i++) streams.push(await open(api, run, { address: '127.0.0.2' }));
        assert.deepEqual(
          streams.map((s) => s.status),
          [200, 200],
        );
        await until(() => counts(api).subscribers === 2, 'two subscribers');
        const refused = await open(api, run, { address: '127.0.0.2' });
        await assertRefused(refused, /Too many open event streams for this client: at most 2 at once/);
        assert.deepEqual(
          counts(api),
          { slots: 2, subscribers: 2 },
          'the refused stream holds no slot and no subscriber',
        );
        const other = await open(api, run, { address: '127.0.0.3' });
        streams.push(other);
        assert.equal(other.status, 200);
        await until(() => counts(api).subscribers === 3, 'the other client streams');
      } finally {
        for (const s of streams) s.close();
        await api.close();
      }
    });

    it('with keys, the limit is per API key whatever the address, and a slot freed by a client that disconnects from an idle run is reused', async () => {
      const keys = ['spur_streams-key-one', 'spur_streams-key-two'];
      const api = await startApi({
        ...quiet,
        SPUR_API_KEY_HASHES: keys.map(hashApiKey).join(','),
        SPUR_EVENT_STREAMS_PER_CLIENT: '1',
      });
      const streams: SseStream[] = [];
      try {
        const run = await idleRun(api, 2);
        const first = await open(api, run, { key: keys[0] });
        streams.push(first);
        assert.equal(first.status, 200);
        await assertRefused(
          await open(api, run, { key: keys[0], address: '127.0.0.4' }),
          /for this client: at most 1 at once \(SPUR_EVENT_STREAMS_PER_CLIENT\)/,
        );
        const second = await open(api, run, { key: keys[1] });
        streams.push(second);
        assert.equal(second.status, 200, 'the other key, from the same address');
        await until(() => counts(api).subscribers === 2, 'both keys stream');

        first.close();
        await until(
          () => counts(api).slots === 1 && counts(api).subscribers === 1,
          'the disconnect frees the slot and the subscriber',
        );
        assert.equal(
          first.events.length + second.events.length,
          0,
          'the run sent nothing: only the socket closing told the api',
        );
        const again = await open(api, run, { key: keys[0] });
        streams.push(again);
        assert.equal(again.status, 200, 'the freed slot is taken again');
        await until(() => counts(api).subscribers === 2, 'streaming again');
      } finally {
        for (const s of streams) s.close();
        await api.close();
      }
    });

    it('past SPUR_EVENT_STREAMS_MAX every client gets 429 until a stream ends, then the slot is reusable', async () => {
      const api = await startApi({ ...quiet, SPUR_EVENT_STREAMS_PER_CLIENT: '2', SPUR_EVENT_STREAMS_MAX: '3' });
      const streams: SseStream[] = [];
      try {
        const runs = [await idleRun(api, 3), await idleRun(api, 4)];
        for (const [address, run] of [
          ['127.0.0.5', runs[0]],
          ['127.0.0.5', runs[1]],
          ['127.0.0.6', runs[0]],
        ] as const)
          streams.push(await open(api, run, { address }));
        assert.deepEqual(
          streams.map((s) => s.status),
          [200, 200, 200],
        );
        await until(() => counts(api).subscribers === 3, 'three subscribers');
        for (const address of ['127.0.0.6', '127.0.0.7']) {
          await assertRefused(
            await open(api, runs[1] as string, { address }),
            /Too many open event streams on this server: at most 3 at once \(SPUR_EVENT_STREAMS_MAX\)/,
          );
        }
        assert.deepEqual(counts(api), { slots: 3, subscribers: 3 });
        assert.equal(api.services.runEvents.stats().watchers, 2, 'no watcher was started for a refused stream');

        (streams[1] as SseStream).close();
        await until(() => counts(api).slots === 2, 'the closed stream frees its slot');
        await until(
          () => api.services.runEvents.stats().watchers === 1,
          "the last stream of a run stops the run's watcher",
        );
        const after = await open(api, runs[1] as string, { address: '127.0.0.7' });
        streams.push(after);
        assert.equal(after.status, 200);
        await until(() => counts(api).subscribers === 3, 'the freed slot streams');
      } finally {
        for (const s of streams) s.close();
        await api.close();
      }
    });

    it('a stream refused for an unknown run (404) or ended by its run gives its slot back', async () => {
      const api = await startApi({ SPUR_EVENT_STREAMS_PER_CLIENT: '1' });
      try {
        for (let i = 0; i < 3; i++) {
          const missing = await open(api, 'R404404', {});
          assert.equal(missing.status, 404);
          await missing.ended;
        }
        await until(() => counts(api).slots === 0, 'no slot held by the 404s');
        const run = await idleRun(api, 5);
        await api.models.Run.updateOne({ _id: run }, { $set: { status: 'COMPLETED', end_time: new Date() } });
        for (let i = 0; i < 2; i++) {
          const done = await open(api, run, {});
          assert.equal(done.status, 200);
          assert.equal(await done.ended, true, 'the server ends the stream of a finished run');
          assert.deepEqual(
            done.events.map((e) => e.event),
            ['run.completed'],
          );
          await until(() => counts(api).slots === 0, 'the ended stream frees its slot');
        }
      } finally {
        await api.close();
      }
    });
  });
});

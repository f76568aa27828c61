import assert from 'node:assert/strict';
import { isFinal, startEngine, waitForRun, type Engine } from '../support/engine';
import { l, n } from '../support/graphs';

type Run = { id: string; status: string; parent_run_id: string | null; input_dataset_id: string | null };

/** What `GET /api/ds/{id}/list_runs/` answers for real batches: the batches, not their rows. */
describe('e2e: the runs that used a dataset', function () {
  this.timeout(180_000);
  let engine: Engine;
  before(async () => {
    engine = await startEngine();
  });
  after(() => engine?.close());

  it('two batches over one dataset: both parents listed newest first, whole, no row; paged when asked', async () => {
    const { http } = engine;
    const fd = new FormData();
    fd.append('file', new Blob(['x\na\nb\nc\n'], { type: 'text/csv' }), 'rows.csv');
    const ds = (await http.post('/ds/?name=used%20twice', fd)).body as { id: string };
    const wf = (
      await http.post('/wf/', {
        name: 'echo rows',
        definition: {
          nodes: [
            n('in', 'InputNode', { output_schema: { x: 'string' } }),
            n('out', 'OutputNode', { output_map: { x: 'in.x' } }),
          ],
          links: [l('in', 'out')],
        },
      })
    ).body as { id: string };
    const parents: string[] = [];
    for (let batch = 0; batch < 2; batch++) {
      const started = await http.post(`/wf/${wf.id}/start_batch_run/`, { dataset_id: ds.id, mini_batch_size: 2 });
      assert.equal(started.status, 200, started.text);
      const done = (await waitForRun(http, started.body.id, isFinal, 120_000)) as Run;
      assert.equal(done.status, 'COMPLETED');
      parents.push(done.id);
    }
    const rows = ((await http.get('/run/?parent_only=false&page_size=100')).body as Run[]).filter((r) =>
      parents.includes(r.parent_run_id ?? ''),
    );
    assert.equal(rows.length, 6, 'each batch ran its three rows');
    assert.ok(
      rows.every((r) => r.input_dataset_id === ds.id),
      'the rows carry the dataset too',
    );

    const listed = await http.get(`/ds/${ds.id}/list_runs/`);
    assert.equal(listed.status, 200, listed.text);
    assert.deepEqual(
      (listed.body as Run[]).map((r) => [r.id, r.parent_run_id, r.input_dataset_id]),
      [...parents].reverse().map((id) => [id, null, ds.id]),
    );
    const page = async (q: string) => ((await http.get(`/ds/${ds.id}/list_runs/?${q}`)).body as Run[]).map((r) => r.id);
    assert.deepEqual(await page('page_size=1'), [parents[1]]);
    assert.deepEqual(await page('page=2&page_size=1'), [parents[0]]);
    assert.deepEqual(await page('page=3&page_size=1'), []);
  });
});

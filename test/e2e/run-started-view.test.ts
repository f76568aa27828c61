// A run between its start and its workflow's first save: its record still says PENDING (no worker
// has run it yet), but it has started, and reads show it so — PySpur's editor polls a run once a
// second and stops at a PENDING run, or at a RUNNING run without a PENDING or RUNNING task.
import assert from 'node:assert/strict';
import { hashApiKey } from '../../src/http/api-keys';
import { bearer, memberWithKey } from '../support/access';
import { startApi, type TestApi } from '../support/api';
import { waitForRun } from '../support/engine';
import { l, n, pythonExclaim } from '../support/graphs';
import { client } from '../support/http';
import { startWorker, type TestWorker } from '../support/worker';

interface TaskView {
  id: string;
  node_id: string;
  status: string;
  inputs: unknown;
  outputs: unknown;
}

const KEY = 'spur_run-started-view-key-0123456789';

/** src → py → out, and a loop beside: its own nodes (li, lo) run inside it and have no task of their own. */
const definition = {
  nodes: [
    ...pythonExclaim.nodes.slice(0, 2),
    n('loop', 'ForLoopNode', { num_iterations: 1 }),
    n('li', 'InputNode', {}, { parent_id: 'loop' }),
    n('lo', 'OutputNode', { output_map: { x: 'li.src.x' } }, { parent_id: 'loop' }),
    ...pythonExclaim.nodes.slice(2),
  ],
  links: [...pythonExclaim.links, l('src', 'loop'), l('li', 'lo')],
};

const view = (tasks: TaskView[]) => tasks.map((t) => [t.node_id, t.status, t.inputs, t.outputs]);

describe('e2e: a started run that no worker has picked up yet', function () {
  this.timeout(120_000);
  let api: TestApi | undefined;
  let worker: TestWorker | undefined;
  after(async () => {
    await worker?.stop();
    await api?.close();
  });

  it('reads RUNNING with every node PENDING under the ids it ends with, while its record stays PENDING', async () => {
    api = await startApi({ SPUR_API_KEY_HASHES: hashApiKey(KEY) }); // no worker: the workflow waits on its task queue
    const http = client(api.baseUrl, bearer(KEY));
    const wf = (await http.post('/wf/', { name: 'started, not picked up', definition })).body;
    const started = await http.post(`/wf/${wf.id}/start_run/`, { initial_inputs: { src: { x: 'late' } } });
    assert.equal(started.status, 200, started.text);
    // The answer to a start is the run as recorded, before its workflow starts (PySpur's).
    assert.equal(started.body.status, 'PENDING');
    assert.deepEqual(started.body.tasks, []);
    const runId: string = started.body.id;

    const opening = [
      ['src', 'PENDING', null, null],
      ['py', 'PENDING', null, null],
      ['loop', 'PENDING', null, null],
      ['out', 'PENDING', null, null],
    ];
    const status = (await http.get(`/run/${runId}/status/`)).body;
    assert.equal(status.status, 'RUNNING');
    assert.deepEqual(view(status.tasks), opening);
    assert.equal(status.percentage_complete, 0);
    const run = (await http.get(`/run/${runId}/`)).body;
    assert.equal(run.status, 'RUNNING');
    assert.deepEqual(view(run.tasks), opening);
    const [listed] = (await http.get(`/wf/${wf.id}/runs/`)).body;
    assert.equal(listed.id, runId);
    assert.equal(listed.status, 'RUNNING');
    assert.deepEqual(view(listed.tasks), opening);
    // A list filtered by status matches records: the run is listed as its record says.
    const pendingOnes = (await http.get(`/wf/${wf.id}/runs/?status=PENDING`)).body;
    assert.deepEqual(
      pendingOnes.map((r: { id: string; status: string; tasks: TaskView[] }) => [r.id, r.status, r.tasks]),
      [[runId, 'PENDING', []]],
    );
    assert.deepEqual((await http.get(`/wf/${wf.id}/runs/?status=RUNNING`)).body, []);
    // Nothing of it is seen without a key or from another workspace.
    const team = await http.post('/access/workspaces/', { name: 'team-b' });
    assert.equal(team.status, 201, team.text);
    const other = client(api.baseUrl, bearer((await memberWithKey(http, team.body.id, 'bob', 'admin')).key.key));
    const anonymous = client(api.baseUrl);
    for (const [who, reader, answer] of [
      ['no key', anonymous, 401],
      ['another workspace', other, 404],
    ] as const) {
      const refused = await reader.get(`/run/${runId}/status/`);
      assert.equal(refused.status, answer, `${who}: ${refused.text}`);
      const listed = await reader.get('/run/?page_size=100');
      assert.doesNotMatch(`${refused.text} ${listed.text}`, new RegExp(`${runId}\\b|late`), who);
    }
    // Reads change nothing: the record is the workflow's to write.
    const record = await api.models.Run.findById(runId, { status: 1 }).lean<{ status: string }>();
    assert.equal(record?.status, 'PENDING');

    worker = await startWorker(api.env);
    const done = await waitForRun(http, runId);
    assert.equal(done.status, 'COMPLETED', JSON.stringify(done));
    assert.deepEqual(done.outputs.out, { result: 'late!' });
    assert.deepEqual(
      done.tasks.map((t: TaskView) => [t.node_id, t.id, t.status]),
      (status.tasks as TaskView[]).map((t) => [t.node_id, t.id, 'COMPLETED']),
    );
  });
});

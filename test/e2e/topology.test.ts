import assert from 'node:assert/strict';
import os from 'node:os';
import { runWorkflowId } from '../../src/contracts/workflow-names';
import { startApi, type TestApi } from '../support/api';
import { startApiProcess, type ApiProcess } from '../support/api-process';
import { waitForRun } from '../support/engine';
import { pythonExclaim } from '../support/graphs';
import { startWorker, type TestWorker } from '../support/worker';

const RUNS = 20;

/** Worker identities that completed workflow tasks or started activities of one run (its Temporal history). */
async function identitiesOf(api: TestApi, runId: string): Promise<Set<string>> {
  const history = await api.temporal.workflow
    .getHandle(runWorkflowId(runId, api.config.temporal.workflowIdPrefix))
    .fetchHistory();
  const ids = new Set<string>();
  for (const e of history.events ?? []) {
    const identity = e.workflowTaskCompletedEventAttributes?.identity ?? e.activityTaskStartedEventAttributes?.identity;
    if (identity) ids.add(identity);
  }
  return ids;
}

describe('e2e: production topology — the api as its own process, two workers', function () {
  this.timeout(180_000);
  let api: TestApi;
  let apiProcess: ApiProcess | undefined;
  const workers: TestWorker[] = [];
  before(async () => {
    api = await startApi(); // its database, task queue and key; clients talk to the api process only
    apiProcess = await startApiProcess(api.env);
    workers.push(await startWorker(api.env), await startWorker(api.env));
  });
  after(async () => {
    await Promise.all(workers.map((w) => w.stop()));
    await apiProcess?.process.stop();
    await api?.close();
  });

  it(`completes ${RUNS} non-blocking runs, and both workers take part`, async () => {
    const http = apiProcess!.http;
    const wf = (await http.post('/wf/', { name: 'topology', definition: pythonExclaim })).body;
    const runIds: string[] = [];
    for (let i = 0; i < RUNS; i++) {
      const res = await http.post(`/wf/${wf.id}/start_run/`, { initial_inputs: { src: { x: `r${i}` } } });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      runIds.push(res.body.id);
    }
    const done = await Promise.all(runIds.map((id) => waitForRun(http, id, undefined, 120_000)));
    for (const [i, run] of done.entries()) {
      assert.equal(run.status, 'COMPLETED', run.message);
      assert.deepEqual((await http.get(`/run/${runIds[i]}/`)).body.outputs.out, { result: `r${i}!` });
    }

    // The SDK's default identity is `<pid>@<hostname>`: each worker process has its own.
    const expected = workers.map((w) => `${w.process.pid}@${os.hostname()}`);
    const seen = new Map<string, number>();
    for (const id of runIds)
      for (const identity of await identitiesOf(api, id)) seen.set(identity, (seen.get(identity) ?? 0) + 1);
    assert.deepEqual([...seen.keys()].sort(), [...expected].sort(), 'tasks went to these two workers and no one else');
    for (const identity of expected) assert.ok((seen.get(identity) ?? 0) > 0, `${identity} did work`);
    assert.equal((await http.get('/health/')).status, 200);
  });
});

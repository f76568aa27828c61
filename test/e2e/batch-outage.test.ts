// An inline batch chunk through a kill -9 of FerretDB: the chunk keeps heartbeating while its
// flushes fail (so Temporal never starts a second attempt beside it), records its rows once the
// database is back, and every row runs exactly once.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { freePort } from '../../scripts/lib/ports';
import { type FerretDbServer, startFerretDb } from '../../scripts/lib/servers';
import { runWorkflowId } from '../../src/contracts/workflow-names';
import { startApi, type TestApi } from '../support/api';
import { waitForRun } from '../support/engine';
// The Python nodes log to a host file (the test's instrument), which the sandbox forbids.
import { HOST_WRITING_PYTHON, loggedSleep, readExecLog, until } from '../support/exec-log';
import { l, n } from '../support/graphs';
import { client } from '../support/http';
import { stack } from '../support/stack';
import { startWorker, type TestWorker } from '../support/worker';

const ROWS = 16;
/** The chunk activity's heartbeat timeout (batch-run.workflow.ts) plus a margin. */
const PAST_HEARTBEAT_TIMEOUT_MS = 10_000 + 3000;

const definition = {
  nodes: [
    n('src', 'InputNode', { output_schema: { x: 'string', tag: 'string', log: 'string' } }),
    loggedSleep('py', 2, { node: 'src', field: 'x' }, 'y'),
    n('out', 'OutputNode', { output_map: { y: 'py.y' } }),
  ],
  links: [l('src', 'py'), l('py', 'out')],
};

describe('e2e: an inline batch through a FerretDB outage', function () {
  this.timeout(300_000);
  let ferret: FerretDbServer;
  let api: TestApi | undefined;
  let worker: TestWorker | undefined;

  after(async () => {
    await worker?.stop();
    await api?.close();
    await ferret?.handle.stop();
  });

  it('keeps heartbeating while flushes fail, runs every row once, and completes when the database is back', async () => {
    const logFile = path.join(stack.tmpDir, `batch-outage-${Date.now()}.log`);
    writeFileSync(logFile, '');
    ferret = await startFerretDb({
      port: await freePort(),
      dataDir: path.join(stack.tmpDir, `ferret-batch-${Date.now()}`),
      logFile: path.join(stack.tmpDir, 'ferret-batch.log'),
    });
    api = await startApi({ ...HOST_WRITING_PYTHON, SPUR_MONGODB_URI: ferret.uri, SPUR_MONGODB_TIMEOUT_MS: '2000' });
    worker = await startWorker(api.env);
    const http = client(api.baseUrl);
    const wf = (await http.post('/wf/', { name: 'batch outage', definition })).body;
    const csv = ['x,tag,log', ...Array.from({ length: ROWS }, (_, i) => `v${i},r${i},${logFile}`)].join('\n');
    const fd = new FormData();
    fd.append('file', new Blob([csv], { type: 'text/csv' }), 'rows.csv');
    const ds = await http.post('/ds/?name=outage', fd);
    assert.equal(ds.status, 200, ds.text);
    const parent = (await http.post(`/wf/${wf.id}/start_batch_run/`, { dataset_id: ds.body.id, mini_batch_size: 2 }))
      .body;
    await waitForRun(
      http,
      parent.id,
      (r) => ((r as { percentage_complete?: number }).percentage_complete ?? 0) > 0,
      60_000,
    );

    ferret.handle.kill('SIGKILL');
    await ferret.handle.exited;
    const killedAt = Date.now();
    // Event, not sleep: Temporal has a heartbeat of the same attempt from after the chunk's
    // heartbeat timeout would have run out. A chunk whose heartbeats stopped never gets there.
    const handle = api.temporal.workflow.getHandle(runWorkflowId(parent.id, api.env.SPUR_WORKFLOW_ID_PREFIX));
    await until(
      'a heartbeat of the first attempt, past the heartbeat timeout into the outage',
      async () => {
        const pending = (await handle.describe()).raw.pendingActivities?.[0];
        assert.ok(pending, 'the chunk is still running');
        assert.equal(pending.attempt, 1, 'no second attempt was started');
        const last = pending.lastHeartbeatTime?.seconds;
        return last != null && Number(last) * 1000 >= killedAt + PAST_HEARTBEAT_TIMEOUT_MS;
      },
      90_000,
    );

    ferret = await startFerretDb(ferret.options);
    const done = await waitForRun(http, parent.id, (r) => !['PENDING', 'RUNNING'].includes(r.status), 120_000);
    const lines = (await http.get(`/of/${done.output_file_id}/download/`)).text
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line));
    assert.equal(done.status, 'COMPLETED', `${done.message}: ${JSON.stringify(lines.filter((line) => line.error))}`);
    const starts = readExecLog(logFile).filter((e) => e.phase === 'start');
    for (let i = 0; i < ROWS; i++) assert.equal(starts.filter((e) => e.tag === `r${i}`).length, 1, `row ${i} ran once`);
    assert.deepEqual(
      lines.map((line) => line.out),
      Array.from({ length: ROWS }, (_, i) => ({ y: `v${i}-py` })),
    );
  });
});

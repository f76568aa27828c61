import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { freePort, waitForTcp } from '../../scripts/lib/ports';
import { type ManagedProcess, spawnManaged } from '../../scripts/lib/processes';
import { REPO_ROOT } from '../../scripts/lib/tools';
import { runWorkflowId } from '../../src/contracts/workflow-names';
import { client } from '../support/http';
import { input, l, n } from '../support/graphs';
import { stack } from '../support/stack';
import { scrape } from '../support/prom-scrape';

/** Pure nodes only: the dev stack's Python environment is the developer's, not the suite's. */
const echo = {
  nodes: [input('src'), n('out', 'OutputNode', { output_map: { result: 'src.x' } })],
  links: [l('src', 'out')],
};

const cmdline = (pid: number) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');

describe('dev: `npm run dev` starts the single-process topology (the api hosts the worker)', function () {
  this.timeout(240_000);
  let dev: ManagedProcess | undefined;
  const logFile = path.join(stack.tmpDir, `dev-${Date.now()}.log`);
  const ports = { api: 0, temporal: 0, ui: 0, ferret: 0, metrics: 0 };

  before(async () => {
    for (const key of Object.keys(ports) as (keyof typeof ports)[]) ports[key] = await freePort();
    dev = spawnManaged({
      name: 'dev',
      command: process.execPath,
      args: [require.resolve('tsx/cli'), path.join(REPO_ROOT, 'scripts/dev.ts')],
      env: {
        SPUR_PORT: String(ports.api),
        SPUR_TEMPORAL_PORT: String(ports.temporal),
        SPUR_TEMPORAL_UI_PORT: String(ports.ui),
        SPUR_FERRETDB_PORT: String(ports.ferret),
        SPUR_METRICS_PORT: String(ports.metrics),
        SPUR_DATA_DIR: path.join(stack.tmpDir, `dev-data-${Date.now()}`),
        SPUR_DEV_TOPOLOGY: undefined,
        SPUR_LOG_LEVEL: 'warn',
        SPUR_MONGODB_URI: undefined,
        SPUR_TEMPORAL_ADDRESS: undefined,
        SPUR_WORKFLOW_BUNDLE: undefined,
      },
      cwd: REPO_ROOT,
      logFile,
    });
    await waitForTcp('127.0.0.1', ports.api, 180_000);
  });
  after(async () => {
    await dev?.stop('SIGTERM', 30_000);
  });

  it('runs every workflow task of a blocking run in the api process, the first one handed over eagerly', async () => {
    const http = client(`http://127.0.0.1:${ports.api}/api`);
    const wf = (await http.post('/wf/', { name: 'dev topology', definition: echo })).body;
    const res = await http.post(`/wf/${wf.id}/run/`, { initial_inputs: { src: { x: 'dev' } } });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body.out, { result: 'dev' });
    const runId = (await http.get(`/wf/${wf.id}/runs/`)).body[0].id;

    const connection = await Connection.connect({ address: `127.0.0.1:${ports.temporal}` });
    try {
      // The answer came from the run's final save: the workflow's completion may still be on its way.
      const handle = new Client({ connection }).workflow.getHandle(runWorkflowId(runId, ''));
      await handle.result();
      const history = await handle.fetchHistory();
      const identities = new Set<string>();
      for (const e of history.events ?? []) {
        const identity =
          e.workflowTaskCompletedEventAttributes?.identity ?? e.activityTaskStartedEventAttributes?.identity;
        if (identity) identities.add(identity);
      }
      assert.equal(identities.size, 1, `one process did the work: ${[...identities].join(', ')}`);
      const [pid, host] = ([...identities][0] ?? '').split('@');
      assert.equal(host, os.hostname());
      assert.ok(
        cmdline(Number(pid)).some((arg) => arg.endsWith('src/processes/combined.ts')),
        `the worker is the api process (${cmdline(Number(pid)).join(' ')})`,
      );
      const firstTask = history.events?.find(
        (e) => e.workflowTaskStartedEventAttributes,
      )?.workflowTaskStartedEventAttributes;
      assert.equal(firstTask?.workerVersion, null, 'the first workflow task was handed over eagerly, not polled');
    } finally {
      await connection.close();
    }
    assert.match(readFileSync(logFile, 'utf8'), /topology: combined/);
  });

  it("turns metrics on, says where, and serves the api's and its worker's (the SDK's too) there", async () => {
    const url = `http://127.0.0.1:${ports.metrics}/metrics`;
    assert.match(readFileSync(logFile, 'utf8'), new RegExp(`metrics: api ${url.replace(/\./g, '\\.')}`));
    const names = (await scrape(ports.metrics)).families.map((f) => f.name);
    for (const name of ['spur_http_requests_total', 'spur_runs_finished_total', 'temporal_workflow_completed'])
      assert.ok(names.includes(name), `${name} in ${names.join(' ')}`);
  });
});

import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { trusted } from 'mongoose';
import { freePort } from '../../scripts/lib/ports';
import { TEMPORAL_DEV_OPTIONS, restartTemporal, startTemporal, type TemporalServer } from '../../scripts/lib/servers';
import { startApi, type TestApi } from '../support/api';
import { startApiProcess } from '../support/api-process';
import { waitForRun } from '../support/engine';
import { input, l, n } from '../support/graphs';
import { client } from '../support/http';
import { HOST_WRITING_PYTHON } from '../support/exec-log';
import { stack } from '../support/stack';
import { startWorker, type TestWorker } from '../support/worker';

/** Python that logs its execution to a file, then sleeps: what a crash should interrupt. */
function slowPython(id: string, seconds: number, src = 'input_model.src') {
  const code = [
    'import time',
    `open(${src}.log, "a").write(${src}.tag + " ${id} start\\n")`,
    `time.sleep(${seconds})`,
    `open(${src}.log, "a").write(${src}.tag + " ${id} end\\n")`,
    `return {"done": ${src}.tag}`,
  ].join('\n');
  return n(id, 'PythonFuncNode', { code, timeout_seconds: 60, heartbeat_timeout_seconds: 3, output_schema: { done: 'string' } });
}

const slowDefinition = {
  nodes: [input('src'), slowPython('p1', 0.2), n('m', 'MergeNode'), slowPython('p2', 5, 'input_model.m.src'), n('out', 'OutputNode')],
  links: [l('src', 'p1'), l('p1', 'm'), l('src', 'm'), l('m', 'p2'), l('p2', 'out')],
};

function executions(logFile: string): string[] {
  try {
    return readFileSync(logFile, 'utf8').trim().split('\n').filter(Boolean);
  } catch {
    return [];
  }
}

/** Every run COMPLETED, one COMPLETED task per node, and p2's output is its own run's tag. */
async function assertCompleted(http: ReturnType<typeof client>, runIds: string[], tagPrefix: string): Promise<void> {
  const done = await Promise.all(runIds.map((id) => waitForRun(http, id, undefined, 120_000)));
  for (const [i, run] of done.entries()) assert.equal(run.status, 'COMPLETED', `${runIds[i]}: ${JSON.stringify(run.message)}`);
  for (const [i, id] of runIds.entries()) {
    const run = (await http.get(`/run/${id}/`)).body;
    assert.deepEqual(run.tasks.map((t: { node_id: string }) => t.node_id).sort(), ['m', 'out', 'p1', 'p2', 'src'], `${id}: one task per node`);
    assert.ok(run.tasks.every((t: { status: string }) => t.status === 'COMPLETED'), id);
    assert.deepEqual(run.outputs.p2, { done: `${tagPrefix}${i}` }, `${id}: its own output`);
  }
}

async function until(what: string, predicate: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('e2e: durability — killed workers, a restarted Temporal server, a killed api', function () {
  this.timeout(180_000);
  let api: TestApi;
  let worker: TestWorker | undefined;
  let logFile: string;

  beforeEach(async () => {
    logFile = path.join(stack.tmpDir, `exec-${Date.now()}.log`);
    writeFileSync(logFile, '');
  });
  afterEach(async () => {
    await worker?.stop();
    worker = undefined;
    await api?.close();
  });

  it('finishes 20 runs after kill -9 of the worker mid-activity; completed nodes do not run again', async () => {
    api = await startApi(HOST_WRITING_PYTHON);
    const http = client(api.baseUrl);
    worker = await startWorker(api.env);
    const wf = (await http.post('/wf/', { name: 'crash me', definition: slowDefinition })).body;
    const runIds: string[] = [];
    for (let i = 0; i < 20; i++) {
      const res = await http.post(`/wf/${wf.id}/start_run/`, { initial_inputs: { src: { tag: `t${i}`, log: logFile } } });
      assert.equal(res.status, 200);
      runIds.push(res.body.id);
    }
    // Every run is inside p2, with p1 done: kill now.
    await until('all runs in p2', async () => executions(logFile).filter((e) => e.endsWith('p2 start')).length === 20);
    const before = await Promise.all(runIds.map((id) => http.get(`/run/${id}/`)));
    for (const r of before) assert.equal(r.body.tasks.find((t: { node_id: string }) => t.node_id === 'p1').status, 'COMPLETED');
    worker.process.kill('SIGKILL');
    await worker.process.exited;
    // On a loaded machine the first runs' p2 may have finished before the last one started. A p2
    // the projection shows COMPLETED was recorded: it must not run again. One killed mid-sleep
    // (no "end" line) must run again. One that ended just before the kill may go either way.
    const endedBeforeKill = new Set(executions(logFile).filter((e) => e.endsWith('p2 end')).map((e) => e.split(' ')[0]));
    const recorded = new Set<string>();
    for (const [i, id] of runIds.entries()) {
      const r = await http.get(`/run/${id}/`);
      if (r.body.tasks.find((t: { node_id: string }) => t.node_id === 'p2')?.status === 'COMPLETED') recorded.add(`t${i}`);
    }
    worker = await startWorker(api.env);

    // The kill came right after the last p2 started (a 5 s sleep): at least that one was cut off.
    const interrupted = runIds.map((_, i) => `t${i}`).filter((tag) => !recorded.has(tag) && !endedBeforeKill.has(tag));
    assert.ok(interrupted.length > 0, 'the kill interrupted a node in flight');

    await assertCompleted(http, runIds, 't');
    const log = executions(logFile);
    for (let i = 0; i < 20; i++) {
      assert.equal(log.filter((e) => e === `t${i} p1 start`).length, 1, `p1 of run ${i} ran once`);
      const starts = log.filter((e) => e === `t${i} p2 start`).length;
      if (recorded.has(`t${i}`)) assert.equal(starts, 1, `p2 of run ${i} had completed: it must not run again`);
      else if (!endedBeforeKill.has(`t${i}`)) assert.ok(starts >= 2, `p2 of run ${i} was interrupted, so it was retried after the crash`);
      if (!endedBeforeKill.has(`t${i}`)) assert.equal(log.filter((e) => e === `t${i} p2 end`).length, 1, `p2 of run ${i} finished once`);
    }
    assert.equal(await api.models.RunTasks.countDocuments({ _id: trusted({ $in: runIds }) }), 20, 'one task document per run');
  });

  it('loses no run when the Temporal server stops and restarts on the same SQLite file', async () => {
    const own: TemporalServer = await startTemporal({
      ...TEMPORAL_DEV_OPTIONS,
      port: await freePort(),
      uiPort: null,
      dbFile: path.join(stack.tmpDir, `restart-${Date.now()}.db`),
      logFile: path.join(stack.tmpDir, 'temporal-restart.log'),
    });
    try {
      api = await startApi({ ...HOST_WRITING_PYTHON, SPUR_TEMPORAL_ADDRESS: own.address });
      const http = client(api.baseUrl);
      worker = await startWorker(api.env);
      const wf = (await http.post('/wf/', { name: 'server restart', definition: slowDefinition })).body;
      const runIds: string[] = [];
      for (let i = 0; i < 5; i++) runIds.push((await http.post(`/wf/${wf.id}/start_run/`, { initial_inputs: { src: { tag: `s${i}`, log: logFile } } })).body.id);
      await until('runs in p2', async () => executions(logFile).filter((e) => e.endsWith('p2 start')).length === 5);
      const restarted = await restartTemporal(own);
      own.handle = restarted.handle;
      await assertCompleted(http, runIds, 's');
      const log = executions(logFile);
      for (let i = 0; i < 5; i++) assert.equal(log.filter((e) => e === `s${i} p1 start`).length, 1, `p1 of run ${i} ran once`);
      assert.equal(await api.models.RunTasks.countDocuments({ _id: trusted({ $in: runIds }) }), 5, 'one task document per run');
    } finally {
      await worker?.stop();
      worker = undefined;
      await own.handle.stop();
    }
  });

  it('completes a blocking run whose api was killed mid-request; the run is readable afterwards', async () => {
    api = await startApi(HOST_WRITING_PYTHON);
    worker = await startWorker(api.env);
    const apiProcess = await startApiProcess(api.env);
    const wf = (await apiProcess.http.post('/wf/', { name: 'api killed', definition: slowDefinition })).body;
    const pending = apiProcess.http.post(`/wf/${wf.id}/run/`, { initial_inputs: { src: { tag: 'a0', log: logFile } } }).catch((err: Error) => err);
    await until('the run to reach p2', async () => executions(logFile).includes('a0 p2 start'));
    apiProcess.process.kill('SIGKILL');
    assert.ok((await pending) instanceof Error, 'the client lost its connection');
    const http = client(api.baseUrl); // another api instance on the same database
    const [run] = (await http.get(`/wf/${wf.id}/runs/`)).body;
    const finished = await waitForRun(http, run.id);
    assert.equal(finished.status, 'COMPLETED');
    assert.deepEqual(finished.outputs.p2, { done: 'a0' });
  });
});

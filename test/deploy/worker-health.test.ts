import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startApi, type TestApi } from '../support/api';
import { startApiProcess, type ApiProcess } from '../support/api-process';
import { stack } from '../support/stack';
import { definedEnvironment, loadProject, type ComposeProject } from './compose-project';
import { runHealthcheck } from './healthcheck';

/**
 * The Python sandbox needs relaxed container profiles, so it is checked where it runs: each worker
 * container's health check starts one; the api alone (compose's) runs no Python and checks none.
 */
describe('deploy: the Python sandbox is checked by the workers that run it, not by the api', function () {
  this.timeout(120_000);
  let api: TestApi; // a fresh database and task queue; its env points processes at the harness's servers
  let project: ComposeProject;
  let vectors: string;
  const processes: ApiProcess[] = [];
  before(async () => {
    project = await loadProject();
    api = await startApi();
    vectors = mkdtempSync(path.join(os.tmpdir(), 'spur-worker-health-'));
  });
  after(async () => {
    for (const p of processes) await p.process.stop();
    await api?.close();
    rmSync(vectors, { recursive: true, force: true });
  });

  /** The worker container's environment as compose resolves it, its addresses moved to the harness's servers. */
  function workerEnv(overrides: Record<string, string> = {}): Record<string, string> {
    const { SPUR_MONGODB_URI, SPUR_MONGODB_DB, SPUR_TEMPORAL_ADDRESS, SPUR_TASK_QUEUE } = api.env;
    return {
      ...definedEnvironment(project.services.worker),
      SPUR_MONGODB_URI,
      SPUR_MONGODB_DB,
      SPUR_TEMPORAL_ADDRESS,
      SPUR_TASK_QUEUE,
      SPUR_VECTOR_STORE_URI: vectors,
      ...overrides,
    } as Record<string, string>;
  }
  const workerCheck = () => project.services.worker?.healthcheck?.test ?? [];
  const oneLine = (output: string) => {
    const lines = output.trimEnd().split('\n');
    assert.equal(lines.length, 1, `one line: ${output}`);
    return lines[0] ?? '';
  };

  it("passes the worker's health check where a sandbox starts and MongoDB and Temporal answer, saying so in one line", async () => {
    const result = await runHealthcheck(workerCheck(), workerEnv());
    assert.equal(result.code, 0, result.output);
    const line = oneLine(result.output);
    assert.match(line, /^worker healthy: /);
    assert.match(line, /python_sandbox ok \(bubblewrap, network none, Python 3\.\d+/);
    assert.match(line, /mongodb ok/);
    assert.match(line, /temporal ok/);
  });

  it("fails the worker's health check naming the interpreter and SPUR_PYTHON when the sandbox cannot start", async () => {
    const result = await runHealthcheck(workerCheck(), workerEnv({ SPUR_PYTHON: '/nonexistent/python3' }));
    assert.equal(result.code, 1, result.output);
    const line = oneLine(result.output);
    assert.match(line, /^worker unhealthy: python_sandbox FAILED: .*\/nonexistent\/python3.*SPUR_PYTHON/);
    assert.match(line, /mongodb ok/, 'the other checks still ran');
    assert.match(line, /temporal ok/);
  });

  it("fails the worker's health check when bubblewrap is missing from its PATH", async () => {
    const result = await runHealthcheck(
      workerCheck(),
      workerEnv({ PATH: '/nonexistent', SPUR_PYTHON: '/usr/bin/python3' }),
    );
    assert.equal(result.code, 1, result.output);
    assert.match(oneLine(result.output), /^worker unhealthy: python_sandbox FAILED: .*bwrap is not installed/);
  });

  it("fails the worker's health check naming MongoDB and Temporal when they do not answer", async () => {
    const result = await runHealthcheck(
      workerCheck(),
      workerEnv({
        SPUR_MONGODB_URI: 'mongodb://127.0.0.1:1/',
        SPUR_MONGODB_TIMEOUT_MS: '4000',
        SPUR_TEMPORAL_ADDRESS: '127.0.0.1:1',
      }),
    );
    assert.equal(result.code, 1, result.output);
    const line = oneLine(result.output);
    assert.match(line, /^worker unhealthy: mongodb FAILED: .*ECONNREFUSED.* \| temporal FAILED: /);
    assert.match(line, /python_sandbox ok/);
  });

  it('the api alone (src/processes/api.ts, as compose runs it) reports MongoDB, Temporal and its audit trail, no Python: healthy even with no usable Python', async () => {
    const alone = await startApiProcess({ ...api.env, SPUR_PYTHON: '/nonexistent/python3' });
    processes.push(alone);
    const res = await alone.http.get('/health/');
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(Object.keys(res.body.checks).sort(), ['audit_trail', 'mongodb', 'temporal']);
  });

  it('the api hosting a worker (src/processes/combined.ts) still reports the sandbox: it runs Python nodes', async () => {
    const combined = await startApiProcess(
      { ...api.env, SPUR_WORKFLOW_BUNDLE: stack.workflowBundle, SPUR_PYTHON: '/nonexistent/python3' },
      'src/processes/combined.ts',
    );
    processes.push(combined);
    const res = await combined.http.get('/health/');
    assert.equal(res.status, 503);
    assert.deepEqual(Object.keys(res.body.checks).sort(), ['audit_trail', 'mongodb', 'python_sandbox', 'temporal']);
    assert.equal(res.body.checks.python_sandbox.ok, false);
    assert.match(res.body.checks.python_sandbox.error, /\/nonexistent\/python3.*SPUR_PYTHON/);
  });
});

import assert from 'node:assert/strict';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { workerClass } from '../../temporal/activation-watchdog';
import { loadConfig } from '../../src/config/load-config';
import { stack } from '../support/stack';
import { quietRuntime } from '../support/quiet-runtime';
import { until } from '../support/exec-log';

const BUSY_WORKFLOWS = path.join(__dirname, '..', 'fixtures', 'busy-workflows', 'busy.ts');
/** The step busyFor repeats. */
const step = (x: number, i: number) => (x * 31 + i) % 1_000_003;

/**
 * Iterations of busyFor's loop that take at least `ms` of wall time on this machine: at the fastest
 * rate of twenty short windows measured here (in the same V8), so a loaded host, which slows some
 * windows, makes the loop run longer, never shorter.
 */
function iterationsFor(ms: number): number {
  let x = 0;
  let fastest = 0;
  for (let window = 0; window < 20; window++) {
    const t0 = performance.now();
    let n = 0;
    while (performance.now() - t0 < 10) for (let i = 0; i < 10_000; i++, n++) x = step(x, i);
    fastest = Math.max(fastest, n / (performance.now() - t0));
  }
  return Math.ceil(fastest * ms) + (x % 2);
}

describe('e2e: the workflow activation watchdog (SPUR_WORKFLOW_ACTIVATION_TIMEOUT_MS)', function () {
  this.timeout(120_000);
  let connection: Connection;
  let client: Client;

  before(async () => {
    quietRuntime();
    connection = await Connection.connect({ address: stack.temporalAddress });
    client = new Client({ connection });
  });
  after(async () => connection?.close());

  /** Runs busyFor on a worker of `workerClass(timeoutMs)` of its own queue until `settled` says so. */
  async function busyRun(
    timeoutMs: number | undefined,
    iterations: number,
    settled: (h: ReturnType<Client['workflow']['getHandle']>) => Promise<boolean>,
  ) {
    const native = await NativeConnection.connect({ address: stack.temporalAddress });
    const taskQueue = `watchdog-${randomUUID()}`;
    const worker = await workerClass(timeoutMs).create({
      connection: native,
      taskQueue,
      workflowsPath: BUSY_WORKFLOWS,
    });
    const running = worker.run();
    try {
      const handle = await client.workflow.start('busyFor', {
        taskQueue,
        workflowId: taskQueue,
        args: [iterations],
        workflowTaskTimeout: '60s',
      });
      await until('the busy workflow settles', () => settled(handle), 60_000);
      return handle;
    } finally {
      worker.shutdown();
      await running;
      await native.close();
    }
  }

  it("is off by default: an activation longer than the SDK's own 5 s limit runs to its end", async () => {
    assert.equal(loadConfig({}).temporal.activationTimeoutMs, undefined);
    let status = '';
    let result: unknown;
    await busyRun(undefined, iterationsFor(6_000), async (h) => {
      status = (await h.describe()).status.name;
      if (status === 'COMPLETED') result = await h.result();
      return status !== 'RUNNING';
    });
    assert.equal(status, 'COMPLETED');
    assert.equal(typeof result, 'number');
  });

  it('set, fails the workflow task of an activation that runs longer, and the workflow does not complete', async () => {
    assert.equal(loadConfig({ SPUR_WORKFLOW_ACTIVATION_TIMEOUT_MS: '2000' }).temporal.activationTimeoutMs, 2000);
    let failure = '';
    // 2 s, not less: the watchdog also times the worker's loading of the workflow bundle, which a
    // loaded host may take tens of milliseconds over. Calibrated for 8 s, the loop outlasts it on any host.
    const handle = await busyRun(2000, iterationsFor(8_000), async (h) => {
      const events = (await h.fetchHistory()).events ?? [];
      const failed = events.find((e) => e.workflowTaskFailedEventAttributes);
      failure = failed?.workflowTaskFailedEventAttributes?.failure?.message ?? '';
      // A workflow that completed instead settles too: the assertions below then say so.
      return failed !== undefined || (await h.describe()).status.name !== 'RUNNING';
    });
    assert.match(failure, /timed out/i);
    assert.equal((await handle.describe()).status.name, 'RUNNING');
    await handle.terminate('test over');
  });
});

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { onFreePort } from '../../scripts/lib/ports';
import { startTemporal, type TemporalServer } from '../../scripts/lib/servers';
import { resolveTool } from '../../scripts/lib/tools';
import { startApi, type TestApi } from '../support/api';
import { input, l, n } from '../support/graphs';
import { client } from '../support/http';
import { stack } from '../support/stack';
import { startWorker, type TestWorker } from '../support/worker';
import { loadProject } from './compose-project';

/**
 * The compose `temporal-setup` service's script, run here with this machine's Temporal CLI standing
 * in for the one in temporalio/admin-tools, against a fresh server that knows no Spur attribute.
 */
async function setupCommand(): Promise<string[]> {
  const setup = (await loadProject()).services['temporal-setup'];
  return [...(setup?.entrypoint ?? []), ...(setup?.command ?? [])];
}

function run(command: string[], env: Record<string, string>): Promise<{ code: number; output: string }> {
  const [file, ...args] = command;
  return new Promise((resolve) => {
    const cliDir = path.dirname(resolveTool('temporal'));
    // HOME: the CLI looks for its config file there (a container always has HOME).
    const options = {
      env: { PATH: `${cliDir}${path.delimiter}${process.env.PATH ?? ''}`, HOME: os.tmpdir(), ...env },
      timeout: 150_000,
    };
    execFile(file ?? 'sh', args, options, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
      resolve({ code, output: `${stdout}${stderr}${err?.signal ? `\n(killed by ${err.signal})` : ''}` });
    });
  });
}

describe('deploy: the temporal-setup service registers Spur’s search attributes', function () {
  this.timeout(180_000);
  let temporal: TemporalServer | undefined;
  let api: TestApi | undefined;
  let worker: TestWorker | undefined;
  after(async () => {
    await worker?.stop();
    await api?.close();
    await temporal?.handle.stop();
  });

  it('makes a bare Temporal server ready for runs, and is safe to run again', async () => {
    temporal = await onFreePort((port) =>
      startTemporal({
        port,
        uiPort: null,
        dbFile: path.join(stack.tmpDir, `bare-${Date.now()}.db`),
        logFile: path.join(stack.tmpDir, 'temporal-bare.log'),
      }),
    );
    api = await startApi({ SPUR_TEMPORAL_ADDRESS: temporal.address });
    const http = client(api.baseUrl);
    const wf = (
      await http.post('/wf/', {
        name: 'setup probe',
        definition: {
          nodes: [input('src'), n('out', 'OutputNode', { output_map: { x: 'src.x' } })],
          links: [l('src', 'out')],
        },
      })
    ).body;

    const refused = await http.post(`/wf/${wf.id}/start_run/`, { initial_inputs: { src: { x: 'before' } } });
    assert.equal(refused.status, 503, 'without the attributes Temporal refuses the start');
    assert.match(refused.body.detail, /SpurWorkflowId|search attribute/i);

    const command = await setupCommand();
    const env = { TEMPORAL_ADDRESS: temporal.address, TEMPORAL_NAMESPACE: 'default' };
    const first = await run(command, env);
    assert.equal(first.code, 0, first.output);
    const again = await run(command, env);
    assert.equal(again.code, 0, again.output);
    assert.match(again.output, /SpurRunStatus is registered/);

    worker = await startWorker(api.env);
    const res = await http.post(`/wf/${wf.id}/run/`, { initial_inputs: { src: { x: 'after' } } });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body.out, { x: 'after' });
    // Operators filter runs in the Web UI by these attributes: visibility catches up shortly. A
    // keyless instance's runs are started by `local`.
    const query = `SpurWorkflowId = '${wf.id}' AND SpurRunStatus = 'COMPLETED' AND SpurStartedBy = 'local'`;
    const deadline = Date.now() + 30_000;
    while ((await api.temporal.workflow.count(query)).count < 1) {
      assert.ok(Date.now() < deadline, `no run matched ${query}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  });
});

import assert from 'node:assert/strict';
import { freePort } from '../../scripts/lib/ports';
import { startApi, type TestApi } from '../support/api';
import { client } from '../support/http';

// Workflow code runs only on a worker (never in the api): without one, or without Temporal, the
// client is told to come back (503 with Retry-After), and nothing is stored.

const CODE =
  'from pyspur.workflow_builder import WorkflowBuilder\n' +
  'b = WorkflowBuilder("kept out")\n' +
  'b.add_node(node_type="InputNode", config={}, id="a")\n';

describe('e2e: workflow code while no worker or no Temporal can run it', function () {
  this.timeout(120_000);
  const apis: TestApi[] = [];
  after(() => Promise.all(apis.map((a) => a.close())));

  async function tryEveryRoute(api: TestApi, detail: RegExp): Promise<void> {
    const http = client(api.baseUrl);
    const wf = (await http.post('/wf/', { name: 'unchanged' })).body;
    const answers = await Promise.all([
      http.post('/code_convert/code_to_definition', { code: CODE }),
      http.post('/code_convert/create_from_code', { code: CODE }),
      http.put(`/code_convert/${wf.id}`, { code: CODE }),
    ]);
    for (const res of answers) {
      assert.equal(res.status, 503, res.text);
      assert.equal(res.headers.get('retry-after'), '5');
      assert.match(res.body.detail, detail);
    }
    assert.deepEqual(
      (await api.models.Workflow.find({}, { name: 1 }).lean()).map((w) => w.name),
      ['unchanged'],
      'only the workflow the test saved is stored',
    );
    const after = (await http.get(`/wf/${wf.id}/`)).body;
    assert.deepEqual([after.name, after.definition], [wf.name, wf.definition]);
  }

  it('no worker within SPUR_CODE_PARSE_WAIT_SECONDS: 503 saying so, and nothing stored or changed', async () => {
    // The api alone (src/processes/api.ts's shape): nothing polls its task queue.
    const api = await startApi({ SPUR_CODE_PARSE_WAIT_SECONDS: '15' });
    apis.push(api);
    await tryEveryRoute(api, /No worker ran the workflow code within 15 s; try again/);
  });

  it('Temporal unreachable: 503 naming Temporal, and nothing stored or changed', async () => {
    // A port nothing listens on: the api's Temporal connection is lazy and fails per request.
    const api = await startApi({ SPUR_TEMPORAL_ADDRESS: `127.0.0.1:${await freePort()}` });
    apis.push(api);
    await tryEveryRoute(api, /Temporal/);
  });
});

// Production runs as a regression suite: POST /api/evals/suites/from_runs/ makes a dataset of a
// workflow's runs (their inputs, and the output each recorded as the expected answer) and a suite
// over it; a new version is then compared with the old one on that real traffic.
import assert from 'node:assert/strict';
import { hashApiKey } from '../../src/http/api-keys';
import { bearer, memberWithKey, userWithKey } from '../support/access';
import { type Engine, startEngine } from '../support/engine';
import { echoDefinition, waitForComparison } from '../support/evals';
import { client } from '../support/http';

const ADMIN_KEY = 'spur_from-runs-admin-key-0123456789';
const FIELDS = ['reply', 'alt'];
/** 50 runs: `alt` differs from `reply` in the last five. */
const INPUTS = Array.from({ length: 50 }, (_, i) => ({ reply: `r${i}`, alt: i < 45 ? `r${i}` : `z${i}` }));

type Http = ReturnType<typeof client>;

describe('e2e: a regression suite from production runs', function () {
  this.timeout(300_000);
  let engine: Engine;
  let admin: Http;
  let workflowId: string;

  /** Suites and datasets as the API lists them (names only): what a refused request must leave as it was. */
  const names = async (http: Http) => ({
    suites: ((await http.get('/evals/suites/')).body as { name: string }[]).map((s) => s.name).sort(),
    datasets: ((await http.get('/ds/')).body as { name: string }[]).map((d) => d.name).sort(),
  });

  before(async () => {
    engine = await startEngine({ SPUR_API_KEY_HASHES: hashApiKey(ADMIN_KEY) });
    admin = client(engine.api.baseUrl, bearer(ADMIN_KEY));
    const made = await admin.post('/wf/', { name: 'answers', definition: echoDefinition('reply', FIELDS) });
    assert.equal(made.status, 200, made.text);
    workflowId = made.body.id;
    // Version 1 answers with `reply`: fifty runs of it, the traffic the suite is made from.
    for (const inputs of INPUTS) {
      const res = await admin.post(`/wf/${workflowId}/run/`, { initial_inputs: { in: inputs } });
      assert.equal(res.status, 200, res.text);
    }
  });
  after(() => engine?.close());

  it('makes a 50-row suite from 50 completed runs; a version that changes 5 answers compares at −0.1 and names those 5 rows', async () => {
    const res = await admin.post('/evals/suites/from_runs/', {
      name: 'answers regression',
      workflow_id: workflowId,
      filter: { status: ['COMPLETED'], limit: 50 },
      output_variable: 'out-answer',
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.num_samples, 50);
    assert.equal(res.body.answer_column, 'expected_output');
    assert.deepEqual([...res.body.input_columns].sort(), ['alt', 'reply']);
    assert.deepEqual(res.body.scorer, { type: 'json_equal' });
    const dataset = (await admin.get(`/ds/${res.body.dataset_id}/`)).body;
    assert.equal(dataset.row_count, 50);
    assert.deepEqual([...dataset.columns].sort(), ['alt', 'expected_output', 'reply', 'source_run_id']);
    assert.equal(res.body.source_run_column, 'source_run_id');

    // Version 2 answers with `alt`: a run of it pins it.
    const put = await admin.put(`/wf/${workflowId}/`, { name: 'answers', definition: echoDefinition('alt', FIELDS) });
    assert.equal(put.status, 200, put.text);
    assert.equal((await admin.post(`/wf/${workflowId}/run/`, { initial_inputs: { in: INPUTS[0] } })).status, 200);

    const started = await admin.post('/evals/compare/', {
      suite: 'answers regression',
      workflow_id: workflowId,
      versions: [1, 2],
      output_variable: 'out-answer',
      num_samples: 50,
    });
    assert.equal(started.status, 202, started.text);
    const body = await waitForComparison(admin, started.body.id);
    assert.equal(body.status, 'COMPLETED', JSON.stringify(body).slice(0, 500));
    assert.equal(body.paired_samples, 50);
    assert.deepEqual(body.counts, { both: 45, only_a: 5, only_b: 0, neither: 0 });
    assert.equal(body.accuracy_a, 1);
    assert.equal(body.accuracy_b, 0.9);
    assert.ok(Math.abs(body.delta - -0.1) < 1e-12, String(body.delta));
    assert.deepEqual(
      body.differences.map((d: any) => [d.ground_truth_answer, d.a.predicted_answer, d.b.predicted_answer]).sort(),
      [45, 46, 47, 48, 49].map((i) => [`r${i}`, `r${i}`, `z${i}`]),
    );
  });

  it('refuses what it cannot make, and leaves no suite or dataset behind', async () => {
    const before = await names(admin);
    const post = (body: Record<string, unknown>) =>
      admin.post('/evals/suites/from_runs/', {
        name: 'refused',
        workflow_id: workflowId,
        output_variable: 'out-answer',
        ...body,
      });
    const cases: [Record<string, unknown>, number, RegExp?][] = [
      [{ workflow_id: 'S999' }, 404],
      [{ output_variable: 'out-nothing' }, 422, /out-answer/],
      [{ filter: { status: ['FAILED'] } }, 422, /No run/],
      [{ filter: { started_after: '2999-01-01T00:00:00Z' } }, 422, /No run/],
      // The comparison's rows are runs of the workflow too, but not traffic: never taken.
      [{ filter: { run_type: 'batch' } }, 422, /No run/],
      [{ filter: { limit: 5001 } }, 422],
      [{ filter: { limit: 0 } }, 422],
      [{ filter: { statuses: ['COMPLETED'] } }, 422],
      // Operators where values belong are data, refused by the schema, never a query.
      [{ filter: { status: [{ $ne: null }] } }, 422],
      [{ filter: { run_type: { $gt: '' } } }, 422],
      [{ workflow_id: { $ne: null } }, 422],
      [{ name: 'answers regression' }, 409],
    ];
    for (const [body, status, detail] of cases) {
      const res = await post(body);
      assert.equal(res.status, status, `${JSON.stringify(body)}: ${res.text}`);
      if (detail) assert.match(res.text, detail, JSON.stringify(body));
    }
    assert.deepEqual(await names(admin), before);
  });

  it("a viewer may not make one (403), and another workspace's builder finds neither the workflow nor its runs (404)", async () => {
    const before = await names(admin);
    const viewer = client(engine.api.baseUrl, bearer((await userWithKey(admin, 'vic', 'viewer')).key.key));
    const body = { name: 'theirs', workflow_id: workflowId, output_variable: 'out-answer' };
    assert.equal((await viewer.post('/evals/suites/from_runs/', body)).status, 403);

    const team = await admin.post('/access/workspaces/', { name: 'team-from-runs' });
    assert.equal(team.status, 201, team.text);
    const { key } = await memberWithKey(admin, team.body.id, 'teamlead', 'builder');
    const other = client(engine.api.baseUrl, bearer(key.key));
    const res = await other.post('/evals/suites/from_runs/', body);
    assert.equal(res.status, 404, res.text);
    assert.deepEqual(await names(other), { suites: [], datasets: [] });
    assert.deepEqual(await names(admin), before);
  });
});

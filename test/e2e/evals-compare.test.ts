import assert from 'node:assert/strict';
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Engine, startEngine } from '../support/engine';
import { l, n } from '../support/graphs';
import { eventually } from '../support/python-runs';
import { LETTER_ROWS, twoVersions, waitForComparison } from '../support/evals';

/**
 * A local API whose `GET /hold/<key>` answers `{"alt": key}` only once the test releases that key:
 * what keeps an eval's row running (a read, which evals make as usual) until the test says so.
 */
async function startHolder() {
  const waiting = new Map<string, () => void>();
  const released = new Set<string>();
  const server: Server = createServer((req, res) => {
    const key = decodeURIComponent((req.url ?? '').replace(/^\/hold\//, ''));
    const answer = () => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ alt: key }));
    if (released.has(key)) answer();
    else waiting.set(key, answer);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    isWaiting: (key: string) => waiting.has(key),
    release(key: string) {
      released.add(key);
      waiting.get(key)?.();
      waiting.delete(key);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('e2e: comparing two versions of a workflow on the same rows', function () {
  this.timeout(240_000);
  let engine: Engine;
  let holder: Awaited<ReturnType<typeof startHolder>>;
  before(async () => {
    engine = await startEngine({ SPUR_OUTBOUND_ALLOW_PRIVATE: 'true' });
    holder = await startHolder();
  });
  after(async () => {
    await engine?.close();
    await holder?.close();
  });

  it('answers the accuracy delta with its 95 % interval and the examples that differ', async () => {
    const { http } = engine;
    const { suite, workflowId } = await twoVersions(http, 'letters');

    const started = await http.post('/evals/compare/', {
      suite: suite.name,
      workflow_id: workflowId,
      versions: [1, 2],
      output_variable: 'out-answer',
      num_samples: 6,
    });
    assert.equal(started.status, 202, JSON.stringify(started.body));
    assert.match(started.body.id, /^EC\d+$/);

    const body = await waitForComparison(http, started.body.id);
    assert.equal(body.status, 'COMPLETED', JSON.stringify(body));
    assert.deepEqual(
      body.runs.map((r: any) => r.workflow_version),
      [1, 2],
    );
    assert.equal(body.paired_samples, 6);
    assert.deepEqual(body.counts, { both: 2, only_a: 0, only_b: 3, neither: 1 });
    assert.equal(body.accuracy_a, 2 / 6);
    assert.equal(body.accuracy_b, 5 / 6);
    assert.equal(body.delta, 0.5);
    // Newcombe's method 10 for these counts, worked out apart from Spur's code (the unit test checks
    // the code against the paper's own examples).
    assert.ok(Math.abs(body.ci_low - -0.0403) < 1e-4, String(body.ci_low));
    assert.ok(Math.abs(body.ci_high - 0.7732) < 1e-4, String(body.ci_high));
    assert.ok(body.ci_low < 0 && body.ci_high > 0.5, 'six rows cannot tell the versions apart beyond chance');
    assert.match(body.method, /Newcombe/);
    assert.deepEqual(
      body.differences.map((d: any) => [
        d.example_id,
        d.a.predicted_answer,
        d.b.predicted_answer,
        d.ground_truth_answer,
      ]),
      [
        [3, 'x', 'c', 'c'],
        [4, 'x', 'd', 'd'],
        [5, 'x', 'e', 'e'],
      ],
    );
    const again = (await http.get(`/evals/compare/${started.body.id}/`)).body;
    assert.deepEqual(
      [again.ci_low, again.ci_high],
      [body.ci_low, body.ci_high],
      'the same results give the same interval',
    );
  });

  it('a body without output_variable scores the one output variable the versions have', async () => {
    const { http } = engine;
    const { suite, workflowId } = await twoVersions(http, 'letters, variable implied');
    const started = await http.post('/evals/compare/', { suite: suite.id, workflow_id: workflowId, versions: [1, 2] });
    assert.equal(started.status, 202, JSON.stringify(started.body));
    assert.deepEqual(
      started.body.runs.map((r: any) => r.output_variable),
      ['out-answer', 'out-answer'],
    );
    const body = await waitForComparison(http, started.body.id);
    assert.equal(body.status, 'COMPLETED', JSON.stringify(body));
    assert.equal(body.delta, 0.5);
  });

  it('answers delta null, not 0, until the comparison has ended, with examples already paired', async () => {
    const { http } = engine;
    const { suite, workflowId } = await twoVersions(http, 'letters, B waits for the test');
    // Version 3 answers with alt, as version 2 does, once the test lets each row's read through.
    // (A person's pause cannot hold it: an eval's pauses resolve by the suite's policy.)
    const gatedAlt = {
      nodes: [
        n('in', 'InputNode', { output_schema: { reply: 'string', alt: 'string' } }),
        n('gate', 'HTTPRequestNode', {
          url: `${holder.url}/hold/{{ in.alt }}`,
          timeout_seconds: 180,
          max_retries: 0,
        }),
        n('out', 'OutputNode', { output_schema: { answer: 'string' }, output_map: { answer: 'gate.json.alt' } }),
      ],
      links: [l('in', 'gate'), l('gate', 'out')],
    };
    const put = await http.put(`/wf/${workflowId}/`, { name: suite.name, definition: gatedAlt });
    assert.equal(put.status, 200, JSON.stringify(put.body));
    holder.release('pin');
    const pinned = await http.post(`/wf/${workflowId}/run/`, { initial_inputs: { in: { reply: 'r', alt: 'pin' } } });
    assert.equal(pinned.status, 200, JSON.stringify(pinned.body));
    assert.equal(pinned.body.out.answer, 'pin');

    const started = await http.post('/evals/compare/', {
      suite: suite.id,
      workflow_id: workflowId,
      versions: [1, 3],
      output_variable: 'out-answer',
      num_samples: 6,
      concurrency: 6,
    });
    assert.equal(started.status, 202, JSON.stringify(started.body));
    assert.equal(started.body.delta, null, `started ${started.body.status}: ${JSON.stringify(started.body)}`);
    /** Lets row `row` of B through once its read waits. */
    const letThrough = async (row: number) => {
      const key = LETTER_ROWS[row - 1]?.alt as string;
      await eventually(`row ${row} waiting`, async () => (holder.isWaiting(key) ? true : undefined), 60_000);
      holder.release(key);
    };
    // Rows 1–5 of B let through: five examples paired, the sixth still waiting.
    for (let row = 1; row <= 5; row++) await letThrough(row);
    const midway = await eventually('five examples paired', async () => {
      const b = (await http.get(`/evals/compare/${started.body.id}/`)).body;
      return b.paired_samples === 5 ? b : undefined;
    });
    assert.equal(midway.status, 'RUNNING', JSON.stringify(midway));
    assert.equal(midway.delta, null, 'no delta while a run is still going');
    assert.deepEqual(midway.counts, { both: 2, only_a: 0, only_b: 3, neither: 0 });

    await letThrough(6);
    const ended = await waitForComparison(http, started.body.id);
    assert.equal(ended.status, 'COMPLETED', JSON.stringify(ended));
    assert.equal(ended.delta, 0.5);
  });
});

import assert from 'node:assert/strict';
import type { client } from './http';
import { l, n } from './graphs';
import { pollDelays } from './poll';

type Http = ReturnType<typeof client>;

/** Uploads rows as a JSON Lines dataset (cells keep their types) and returns its id. */
export async function uploadRows(http: Http, name: string, rows: Record<string, unknown>[]): Promise<string> {
  const fd = new FormData();
  const text = rows.map((r) => JSON.stringify(r)).join('\n');
  fd.append('file', new Blob([text], { type: 'application/jsonl' }), `${name}.jsonl`);
  const res = await http.post(`/ds/?name=${encodeURIComponent(name)}`, fd);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return (res.body as { id: string }).id;
}

/** in(reply) → out(answer = in.<from>): the "model" answers with a cell of the row, so a test decides each prediction. */
export function echoDefinition(from = 'reply', fields: string[] = ['reply']) {
  return {
    nodes: [
      n('in', 'InputNode', { output_schema: Object.fromEntries(fields.map((f) => [f, 'string'])) }),
      n('out', 'OutputNode', { output_schema: { answer: 'string' }, output_map: { answer: `in.${from}` } }),
    ],
    links: [l('in', 'out')],
  };
}

export async function createWorkflow(http: Http, name: string, definition: unknown): Promise<string> {
  const res = await http.post('/wf/', { name, definition });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return (res.body as { id: string }).id;
}

export async function createSuite(http: Http, body: Record<string, unknown>): Promise<Record<string, any>> {
  const res = await http.post('/evals/suites/', body);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body as Record<string, any>;
}

/** Polls GET /evals/runs/{id} until the eval run has ended (or `done` holds). */
export async function waitForEval(
  http: Http,
  id: string,
  done: (run: Record<string, any>) => boolean = (r) => ['COMPLETED', 'FAILED', 'CANCELED'].includes(r.status),
  timeoutMs = 120_000,
): Promise<Record<string, any>> {
  const deadline = Date.now() + timeoutMs;
  const pause = pollDelays();
  for (;;) {
    const res = await http.get(`/evals/runs/${id}`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    if (done(res.body as Record<string, any>)) return res.body as Record<string, any>;
    if (Date.now() > deadline)
      throw new Error(`eval run ${id} still ${(res.body as any).status} after ${timeoutMs} ms`);
    await pause();
  }
}

/** The verdicts of an ended eval run, by example id. */
export function verdicts(run: Record<string, any>): boolean[] {
  return (run.results.subset_metrics.default.per_example_results as { is_correct: boolean }[]).map((e) => e.is_correct);
}

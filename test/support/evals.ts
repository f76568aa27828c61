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

/**
 * Six rows: version 1 of the `twoVersions` workflow answers with `reply`, version 2 with `alt`.
 * Version 1 is right on rows 1–2, version 2 on rows 1–5: 2 right in both, 3 right with version 2
 * only, 1 wrong in both.
 */
export const LETTER_ROWS = [
  { reply: 'a', alt: 'a', answer: 'a' },
  { reply: 'b', alt: 'b', answer: 'b' },
  { reply: 'x', alt: 'c', answer: 'c' },
  { reply: 'x', alt: 'd', answer: 'd' },
  { reply: 'x', alt: 'e', answer: 'e' },
  { reply: 'x', alt: 'y', answer: 'f' },
];

/** A suite `name` over LETTER_ROWS (exact scorer) and a workflow with versions 1 (echoes reply) and 2 (echoes alt). */
export async function twoVersions(
  http: Http,
  name: string,
): Promise<{ suite: Record<string, any>; workflowId: string }> {
  const dataset = await uploadRows(http, `${name} rows`, LETTER_ROWS);
  const suite = await createSuite(http, {
    name,
    dataset_id: dataset,
    answer_column: 'answer',
    input_columns: ['reply', 'alt'],
    scorer: { type: 'exact' },
  });
  const fields = ['reply', 'alt'];
  const workflowId = await createWorkflow(http, name, echoDefinition('reply', fields));
  // Each run pins the definition it ran as a version: version 1 answers with reply, version 2 with alt.
  const inputs = { initial_inputs: { in: { reply: 'r', alt: 'a' } } };
  assert.equal((await http.post(`/wf/${workflowId}/run/`, inputs)).status, 200);
  const put = await http.put(`/wf/${workflowId}/`, { name, definition: echoDefinition('alt', fields) });
  assert.equal(put.status, 200, JSON.stringify(put.body));
  assert.equal((await http.post(`/wf/${workflowId}/run/`, inputs)).status, 200);
  const versions = (await http.get(`/wf/${workflowId}/versions/`)).body.map((v: any) => v.version);
  assert.deepEqual(versions, [2, 1]);
  return { suite, workflowId };
}

/** Polls GET /evals/compare/{id}/ until the comparison has ended. */
export async function waitForComparison(http: Http, id: string, timeoutMs = 180_000): Promise<Record<string, any>> {
  const pause = pollDelays();
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await http.get(`/evals/compare/${id}/`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    if (['COMPLETED', 'FAILED', 'CANCELED'].includes(res.body.status)) return res.body as Record<string, any>;
    if (Date.now() > deadline) throw new Error(`comparison ${id} still ${res.body.status} after ${timeoutMs} ms`);
    await pause();
  }
}

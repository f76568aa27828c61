import assert from 'node:assert/strict';
import type { Engine } from './engine';

/**
 * Saves `definition` as a new workflow, runs it blocking with `inputs` for the InputNode `in`, and
 * returns the blocking answer, the run record and its tasks by node id.
 */
export async function runGraph(engine: Engine, definition: unknown, inputs: Record<string, unknown>, name = 'g') {
  const wf = (await engine.http.post('/wf/', { name: `${name}-${Math.random()}`, definition })).body;
  assert.ok(wf.id, JSON.stringify(wf));
  const res = await engine.http.post(`/wf/${wf.id}/run/`, { initial_inputs: { in: inputs } });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  const [record] = (await engine.http.get(`/wf/${wf.id}/runs/`)).body;
  const tasks = Object.fromEntries(record.tasks.map((t: { node_id: string }) => [t.node_id, t]));
  return { outputs: res.body, record, tasks, wf };
}

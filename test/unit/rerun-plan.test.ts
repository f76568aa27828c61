import assert from 'node:assert/strict';
import { planGraph } from '../../src/engine/graph';
import { downstreamOf, planRerun, reusedStates } from '../../src/engine/rerun-plan';
import type { GraphLink, GraphNode, RunDefinition, TaskRecord } from '../../src/engine/run-contract';
import type { TaskStatus } from '../../src/engine/statuses';

const node = (id: string, nodeType = 'PythonFuncNode', parentId: string | null = null): GraphNode => ({
  id,
  title: id,
  parent_id: parentId,
  node_type: nodeType,
  config: {},
});
const link = (source: string, target: string): GraphLink => ({
  source_id: source,
  target_id: target,
  source_handle: null,
  target_handle: null,
});
function task(nodeId: string, status: TaskStatus = 'COMPLETED'): TaskRecord {
  return {
    id: `T-${nodeId}`,
    node_id: nodeId,
    status,
    inputs: {},
    outputs: status === 'COMPLETED' ? { v: nodeId } : null,
    error: null,
    start_time: '2026-01-01T00:00:00Z',
    end_time: '2026-01-01T00:00:01Z',
    subworkflow_output: null,
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
  };
}

/** in → a → c; in → b → c; b → d; a loop L (child x) beside them. */
const definition: RunDefinition = {
  nodes: [
    node('in', 'InputNode'),
    node('a'),
    node('b'),
    node('c'),
    node('d'),
    node('L', 'ForLoopNode'),
    node('x', 'OutputNode', 'L'),
  ],
  links: [link('in', 'a'), link('in', 'b'), link('a', 'c'), link('b', 'c'), link('b', 'd'), link('in', 'L')],
};
const level = planGraph(definition);
const all = ['in', 'a', 'b', 'c', 'd', 'L'].map((id) => task(id));
const plan = (from: string, tasks = all) => planRerun(definition, level, from, tasks);

describe('rerun plan: what a rerun from a node reuses', () => {
  it('reruns the node and everything downstream of it, reuses the rest (side branches included)', () => {
    assert.deepEqual([...downstreamOf(level, 'a')].sort(), ['a', 'c']);
    const result = plan('a');
    assert.ok(result.ok);
    assert.deepEqual(result.tasks.map((t) => t.node_id).sort(), ['L', 'b', 'd', 'in']);
    assert.deepEqual(reusedStates(result.tasks).get('b'), { status: 'COMPLETED', output: { v: 'b' } });
    const reused = result.tasks.find((t) => t.node_id === 'b');
    assert.equal(reused?.reused, true);
    assert.equal(reused?.usage, undefined, "the original run's tokens are not counted again");
    assert.equal(reused?.start_time, '2026-01-01T00:00:00Z');
  });

  it('refuses a node the definition lacks, and one inside a loop', () => {
    const unknown = plan('zz');
    assert.ok(!unknown.ok && /not in the workflow/.test(unknown.message));
    const nested = plan('x');
    assert.ok(!nested.ok && /inside 'L'.*top-level/.test(nested.message));
  });

  it('refuses when a reused node has no outcome: failed, cancelled with the run, or never ran', () => {
    const failed = plan(
      'c',
      all.map((t) => (t.node_id === 'd' ? task('d', 'FAILED') : t)),
    );
    assert.ok(!failed.ok && /'d' ended FAILED/.test(failed.message));
    // Cancelled although its input was there: the user cancelled the run, nothing to reuse.
    const cancelled = plan(
      'c',
      all.map((t) => (t.node_id === 'd' ? task('d', 'CANCELED') : t)),
    );
    assert.ok(!cancelled.ok && /'d' ended CANCELED/.test(cancelled.message));
    const absent = plan(
      'c',
      all.filter((t) => t.node_id !== 'L'),
    );
    assert.ok(!absent.ok && /'L' did not run/.test(absent.message));
    assert.ok(
      plan(
        'd',
        all.map((t) => (t.node_id === 'd' ? task('d', 'FAILED') : t)),
      ).ok,
      'the failed node itself can be the start',
    );
  });
});

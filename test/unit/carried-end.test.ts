import assert from 'node:assert/strict';
import { carriedEndContent, finalContentDigest } from '../../src/engine/carried-end';
import type { RegionOutcome } from '../../src/engine/pure-region';
import type { GraphNode, TaskRecord } from '../../src/engine/run-contract';
import { TaskBook } from '../../src/engine/task-book';
import { answeredWrite } from '../../src/engine/task-writes';

const node = (id: string, node_type: string, config: Record<string, unknown> = {}): GraphNode => ({
  id,
  title: `${id} title`,
  parent_id: null,
  node_type,
  config,
});
const nodes = [node('in', 'InputNode'), node('call', 'PythonFuncNode'), node('out', 'OutputNode')];

/** The tasks as a workflow holds them once `call` started: `in` completed, `call` running, `out` to come. */
function tasksBefore(): TaskRecord[] {
  const book = new TaskBook(nodes, { in: 'T1', call: 'T2', out: 'T3' });
  book.apply({ nodeId: 'in', status: 'COMPLETED', outputs: { x: 'go' }, endTime: '2026-12-05T10:00:00.000Z' });
  book.apply({ nodeId: 'call', status: 'RUNNING', inputs: { in: { x: 'go' } }, startTime: '2026-12-05T10:00:01.000Z' });
  return book.snapshot();
}

const answer = { output: { y: 'done' }, startTime: '2026-12-05T10:00:01.000Z', endTime: '2026-12-05T10:00:02.000Z' };
const outDone = (status: 'COMPLETED' | 'FAILED'): RegionOutcome => ({
  nodeId: 'out',
  state: status === 'COMPLETED' ? { status, output: { y: 'done' } } : { status, error: 'broken' },
  write: {
    nodeId: 'out',
    status,
    ...(status === 'COMPLETED' ? { outputs: { y: 'done' } } : { error: 'broken' }),
    endTime: '2026-12-05T10:00:03.000Z',
  },
});
/** The walker's write for `call`, answered as `answer` says. */
const callWrite = (input: Record<string, unknown>) => answeredWrite(nodes[1] as GraphNode, input, answer);
const plan = () => ({ tasks: tasksBefore(), nodes: nodes.map(({ id, title }) => ({ id, title })) });

describe('carriedEndContent', () => {
  it("ends the run COMPLETED with every task and the outputs of the completed ones, by id and by title in the nodes' order", () => {
    const content = carriedEndContent(plan(), [callWrite({ in: { x: 'go' } }), outDone('COMPLETED').write]);
    assert.ok(content);
    assert.deepEqual(
      content.tasks.map((t) => [t.node_id, t.status, t.outputs]),
      [
        ['in', 'COMPLETED', { x: 'go' }],
        ['call', 'COMPLETED', { y: 'done' }],
        ['out', 'COMPLETED', { y: 'done' }],
      ],
    );
    const call = content.tasks[1] as TaskRecord;
    assert.deepEqual(
      [call.inputs, call.start_time, call.end_time],
      [{ in: { x: 'go' } }, answer.startTime, answer.endTime],
    );
    assert.deepEqual(content.run, {
      status: 'COMPLETED',
      message: null,
      final: {
        outputsByTitle: { 'in title': { x: 'go' }, 'call title': { y: 'done' }, 'out title': { y: 'done' } },
        outputsById: { in: { x: 'go' }, call: { y: 'done' }, out: { y: 'done' } },
      },
    });
    assert.deepEqual(Object.keys(content.run.final?.outputsById ?? {}), ['in', 'call', 'out']);
  });

  it('ends the run COMPLETED when a task was cancelled without a failure (an untaken route), leaving its output out', () => {
    const content = carriedEndContent(plan(), [
      callWrite({}),
      { nodeId: 'out', status: 'CANCELED', error: null, endTime: '2026-12-05T10:00:03.000Z' },
    ]);
    assert.equal(content?.run.status, 'COMPLETED');
    assert.deepEqual(Object.keys(content?.run.final?.outputsById ?? {}), ['in', 'call']);
  });

  it('writes no end while a node is still to run, or when a node failed', () => {
    assert.equal(carriedEndContent(plan(), [callWrite({})]), null, 'out never ran');
    assert.equal(carriedEndContent(plan(), [callWrite({}), outDone('FAILED').write]), null);
  });
});

describe('finalContentDigest', () => {
  it('is equal for equal content and differs when any value in it differs', () => {
    const content = carriedEndContent(plan(), [callWrite({}), outDone('COMPLETED').write]);
    assert.ok(content);
    const copy = JSON.parse(JSON.stringify(content)) as typeof content;
    assert.equal(finalContentDigest(copy), finalContentDigest(content));
    (copy.tasks[2] as TaskRecord).end_time = '2026-12-05T10:00:03.001Z';
    assert.notEqual(finalContentDigest(copy), finalContentDigest(content));
  });
});

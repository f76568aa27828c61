import assert from 'node:assert/strict';
import { planGraph, type GraphLevel } from '../../src/engine/graph';
import { decideNodeInput, type NodeState } from '../../src/engine/node-inputs';
import type { GraphLink, GraphNode } from '../../src/engine/run-contract';

function node(id: string, nodeType = 'MergeNode', title = id): GraphNode {
  return { id, title, parent_id: null, node_type: nodeType, config: {} };
}

function link(source: string, target: string, sourceHandle: string | null = null): GraphLink {
  return { source_id: source, target_id: target, source_handle: sourceHandle, target_handle: null };
}

const level = (nodes: GraphNode[], links: GraphLink[]): GraphLevel => planGraph({ nodes, links });
const done = (output: Record<string, unknown> | null): NodeState => ({ status: 'COMPLETED', output });
const failed: NodeState = { status: 'FAILED', error: 'boom' };
const canceledByFailure: NodeState = { status: 'CANCELED', upstreamFailure: true };
const canceledQuietly: NodeState = { status: 'CANCELED', upstreamFailure: false };
const states = (entries: Record<string, NodeState>) => new Map(Object.entries(entries));

describe('node inputs: decideNodeInput', () => {
  describe('ordinary nodes', () => {
    const g = level(
      [node('a', 'InputNode', 'Alpha'), node('b', 'StaticValueNode', 'Beta'), node('m')],
      [link('b', 'm'), link('a', 'm')],
    );

    it('keys the input by predecessor title, in link order', () => {
      const decision = decideNodeInput(g, 'm', states({ a: done({ x: 1 }), b: done({ y: 2 }) }));
      assert.deepEqual(decision, { kind: 'run', input: { Beta: { y: 2 }, Alpha: { x: 1 } } });
      assert.ok(decision.kind === 'run');
      assert.deepEqual(Object.keys(decision.input), ['Beta', 'Alpha']);
    });

    it('passes an empty output on (only null means nothing)', () => {
      assert.deepEqual(decideNodeInput(g, 'm', states({ a: done({}), b: done({ y: 2 }) })), {
        kind: 'run',
        input: { Beta: { y: 2 }, Alpha: {} },
      });
    });

    it('cancels with upstreamFailure after a FAILED predecessor', () => {
      assert.deepEqual(decideNodeInput(g, 'm', states({ a: failed, b: done({ y: 2 }) })), {
        kind: 'cancel',
        upstreamFailure: true,
      });
    });

    it('propagates upstreamFailure from a predecessor cancelled by a failure', () => {
      assert.deepEqual(decideNodeInput(g, 'm', states({ a: done({ x: 1 }), b: canceledByFailure })), {
        kind: 'cancel',
        upstreamFailure: true,
      });
    });

    it('cancels quietly after a quietly cancelled predecessor or a null output', () => {
      assert.deepEqual(decideNodeInput(g, 'm', states({ a: done({ x: 1 }), b: canceledQuietly })), {
        kind: 'cancel',
        upstreamFailure: false,
      });
      assert.deepEqual(decideNodeInput(g, 'm', states({ a: done(null), b: done({ y: 2 }) })), {
        kind: 'cancel',
        upstreamFailure: false,
      });
    });

    it('a failure anywhere upstream wins over a quiet cancel', () => {
      assert.deepEqual(decideNodeInput(g, 'm', states({ a: canceledQuietly, b: failed })), {
        kind: 'cancel',
        upstreamFailure: true,
      });
    });

    it('fails a node with no incoming links', () => {
      const lonely = level([node('in', 'InputNode'), node('lonely', 'StaticValueNode')], []);
      assert.deepEqual(decideNodeInput(lonely, 'lonely', states({ in: done({ x: 1 }) })), {
        kind: 'fail',
        error: 'Node lonely has no input',
      });
    });

    it('fails for an unknown node or a predecessor that has not run', () => {
      assert.deepEqual(decideNodeInput(g, 'ghost', states({})), { kind: 'fail', error: 'Unknown node ghost' });
      const decision = decideNodeInput(g, 'm', states({ b: done({ y: 2 }) }));
      assert.equal(decision.kind, 'fail');
      assert.match((decision as { error: string }).error, /Predecessor a of m has not run/);
    });

    it('two predecessors with the same title: the later link wins (PySpur)', () => {
      const twins = level(
        [node('p1', 'StaticValueNode', 'Same'), node('p2', 'StaticValueNode', 'Same'), node('m')],
        [link('p1', 'm'), link('p2', 'm')],
      );
      assert.deepEqual(decideNodeInput(twins, 'm', states({ p1: done({ v: 1 }), p2: done({ v: 2 }) })), {
        kind: 'run',
        input: { Same: { v: 2 } },
      });
    });
  });

  describe('router predecessors', () => {
    const g = level(
      [node('r', 'RouterNode', 'Router'), node('yes'), node('no'), node('bare')],
      [link('r', 'yes', 'route_yes'), link('r', 'no', 'route_no'), link('r', 'bare')],
    );
    const routed = states({ r: done({ route_yes: { in: { v: 1 } }, route_no: null }) });

    it('hands on the payload of the linked route, keyed by the router’s title', () => {
      assert.deepEqual(decideNodeInput(g, 'yes', routed), { kind: 'run', input: { Router: { in: { v: 1 } } } });
    });

    it('an untaken (null) route cancels without upstream failure', () => {
      assert.deepEqual(decideNodeInput(g, 'no', routed), { kind: 'cancel', upstreamFailure: false });
    });

    it('a route the router did not output counts as untaken', () => {
      const g2 = level([node('r', 'RouterNode'), node('t')], [link('r', 't', 'unknown_route')]);
      assert.deepEqual(decideNodeInput(g2, 't', routed), { kind: 'cancel', upstreamFailure: false });
    });

    it('a link without source_handle fails the node', () => {
      const decision = decideNodeInput(g, 'bare', routed);
      assert.equal(decision.kind, 'fail');
      assert.match((decision as { error: string }).error, /router r .*source_handle/);
    });

    it('a failed router cancels the branch with upstreamFailure', () => {
      assert.deepEqual(decideNodeInput(g, 'yes', states({ r: failed })), { kind: 'cancel', upstreamFailure: true });
    });
  });

  describe('CoalesceNode', () => {
    const g = level(
      [
        node('a', 'StaticValueNode', 'A'),
        node('b', 'StaticValueNode', 'B'),
        node('c', 'StaticValueNode', 'C'),
        node('co', 'CoalesceNode'),
      ],
      [link('a', 'co'), link('b', 'co'), link('c', 'co')],
    );

    it('drops null, failed and cancelled inputs and runs with what is left', () => {
      assert.deepEqual(decideNodeInput(g, 'co', states({ a: done(null), b: done({ v: 'b' }), c: failed })), {
        kind: 'run',
        input: { B: { v: 'b' } },
      });
      assert.deepEqual(
        decideNodeInput(g, 'co', states({ a: canceledByFailure, b: canceledQuietly, c: done({ v: 'c' }) })),
        { kind: 'run', input: { C: { v: 'c' } } },
      );
    });

    it('runs with every input when all arrived', () => {
      const decision = decideNodeInput(
        g,
        'co',
        states({ a: done({ v: 'a' }), b: done({ v: 'b' }), c: done({ v: 'c' }) }),
      );
      assert.deepEqual(decision, { kind: 'run', input: { A: { v: 'a' }, B: { v: 'b' }, C: { v: 'c' } } });
    });

    it('cancels when nothing is left, with upstreamFailure only if a failure caused it', () => {
      assert.deepEqual(decideNodeInput(g, 'co', states({ a: done(null), b: canceledQuietly, c: done(null) })), {
        kind: 'cancel',
        upstreamFailure: false,
      });
      assert.deepEqual(decideNodeInput(g, 'co', states({ a: done(null), b: failed, c: canceledQuietly })), {
        kind: 'cancel',
        upstreamFailure: true,
      });
    });

    it('drops an untaken router route', () => {
      const routed = level(
        [node('r', 'RouterNode', 'R'), node('s', 'StaticValueNode', 'S'), node('co', 'CoalesceNode')],
        [link('r', 'co', 'x'), link('s', 'co')],
      );
      assert.deepEqual(decideNodeInput(routed, 'co', states({ r: done({ x: null }), s: done({ v: 1 }) })), {
        kind: 'run',
        input: { S: { v: 1 } },
      });
    });
  });
});

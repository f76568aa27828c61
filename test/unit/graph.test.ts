import assert from 'node:assert/strict';
import {
  GraphError,
  nodesRunningAlone,
  planGraph,
  restrictToAncestors,
  topologicalOrder,
  type GraphLevel,
} from '../../src/engine/graph';
import type { GraphLink, GraphNode, RunDefinition } from '../../src/engine/run-contract';

function node(id: string, nodeType = 'MergeNode', parentId: string | null = null): GraphNode {
  return { id, title: id, parent_id: parentId, node_type: nodeType, config: {} };
}

function link(source: string, target: string, sourceHandle: string | null = null): GraphLink {
  return { source_id: source, target_id: target, source_handle: sourceHandle, target_handle: null };
}

/** Nodes by id (MergeNode unless given as `id:Type`), links as `a>b`. */
function def(nodes: string[], links: string[]): RunDefinition {
  return {
    nodes: nodes.map((spec) => {
      const [id, type] = spec.split(':');
      return node(id as string, type);
    }),
    links: links.map((spec) => {
      const [s, t] = spec.split('>');
      return link(s as string, t as string);
    }),
  };
}

const ids = (level: GraphLevel) => level.nodes.map((n) => n.id);
const incomingIds = (level: GraphLevel, id: string) => (level.incoming.get(id) ?? []).map((l) => l.source_id);

describe('graph: planGraph', () => {
  it('builds one level with incoming links in link order and direct successors', () => {
    const level = planGraph(def(['in:InputNode', 'a', 'b', 'm'], ['in>a', 'in>b', 'b>m', 'a>m']));
    assert.deepEqual(ids(level), ['in', 'a', 'b', 'm']);
    assert.deepEqual(incomingIds(level, 'm'), ['b', 'a']);
    assert.deepEqual(incomingIds(level, 'in'), []);
    assert.deepEqual(level.outgoing.get('in'), ['a', 'b']);
    assert.equal(level.byId.get('a')?.id, 'a');
    assert.equal(level.children.size, 0);
  });

  it('moves children into their parent’s level and drops links that cross levels', () => {
    const d: RunDefinition = {
      nodes: [
        node('in', 'InputNode'),
        node('loop', 'ForLoopNode'),
        node('li', 'InputNode', 'loop'),
        node('lo', 'OutputNode', 'loop'),
        node('out', 'OutputNode'),
      ],
      links: [link('in', 'loop'), link('li', 'lo'), link('loop', 'out'), link('in', 'li'), link('lo', 'out')],
    };
    const level = planGraph(d);
    assert.deepEqual(ids(level), ['in', 'loop', 'out']);
    assert.deepEqual(incomingIds(level, 'out'), ['loop'], 'lo → out crosses levels');
    assert.deepEqual(level.outgoing.get('in'), ['loop'], 'in → li crosses levels');
    const child = level.children.get('loop');
    assert.ok(child);
    assert.deepEqual(ids(child), ['li', 'lo']);
    assert.deepEqual(incomingIds(child, 'lo'), ['li']);
    assert.deepEqual(incomingIds(child, 'li'), []);
    assert.deepEqual([...level.children.keys()], ['loop']);
  });

  it('nests children of children', () => {
    const d: RunDefinition = {
      nodes: [node('outer', 'ForLoopNode'), node('inner', 'ForLoopNode', 'outer'), node('x', 'MergeNode', 'inner')],
      links: [],
    };
    const inner = planGraph(d).children.get('outer')?.children.get('inner');
    assert.ok(inner);
    assert.deepEqual(ids(inner), ['x']);
  });

  it('treats a missing parent_id like null', () => {
    const loose = { id: 'a', title: 'a', node_type: 'MergeNode', config: {} } as unknown as GraphNode;
    assert.deepEqual(ids(planGraph({ nodes: [loose, node('b')], links: [link('a', 'b')] })), ['a', 'b']);
  });

  it('refuses a link to a missing node, naming it', () => {
    assert.throws(
      () => planGraph(def(['a'], ['a>ghost'])),
      (err: unknown) => err instanceof GraphError && err.name === 'GraphError' && /'ghost'/.test(err.message),
    );
    assert.throws(() => planGraph(def(['a'], ['phantom>a'])), /'phantom'/);
  });

  it('refuses a cycle, naming the nodes on it (and only those)', () => {
    assert.throws(
      () => planGraph(def(['in', 'a', 'b', 'c'], ['in>a', 'a>b', 'b>a', 'in>c'])),
      (err: unknown) => {
        assert.ok(err instanceof GraphError);
        assert.match(err.message, /cycle through nodes: a, b$/);
        return true;
      },
    );
    assert.throws(() => planGraph(def(['self'], ['self>self'])), /cycle through nodes: self/);
    // Nodes stuck behind a cycle are named with it; the cycle's own nodes always are.
    assert.throws(() => planGraph(def(['a', 'b', 'after'], ['a>b', 'b>a', 'b>after'])), /cycle through nodes: a, b\b/);
  });

  it('refuses a cycle inside a loop’s children', () => {
    const d: RunDefinition = {
      nodes: [node('loop', 'ForLoopNode'), node('x', 'MergeNode', 'loop'), node('y', 'MergeNode', 'loop')],
      links: [link('x', 'y'), link('y', 'x')],
    };
    assert.throws(
      () => planGraph(d),
      (err: unknown) => err instanceof GraphError && /cycle through nodes: x, y/.test(err.message),
    );
  });

  it('accepts an empty definition', () => {
    const level = planGraph({ nodes: [], links: [] });
    assert.deepEqual(ids(level), []);
    assert.deepEqual(topologicalOrder(level), []);
  });
});

describe('graph: topologicalOrder', () => {
  it('puts every node after its predecessors', () => {
    const level = planGraph(def(['m', 'b', 'a', 'in'], ['in>a', 'a>b', 'b>m', 'in>m']));
    assert.deepEqual(topologicalOrder(level), ['in', 'a', 'b', 'm']);
  });

  it('keeps independent nodes in definition order', () => {
    assert.deepEqual(topologicalOrder(planGraph(def(['z', 'y', 'x'], []))), ['z', 'y', 'x']);
    assert.deepEqual(topologicalOrder(planGraph(def(['z', 'in', 'y', 'a'], ['in>a']))), ['z', 'in', 'y', 'a']);
  });

  it('orders nodes that become ready together by the order of the links that freed them', () => {
    // Kahn's queue: c, b, a are all freed by `in`, in link order (not definition order).
    const level = planGraph(def(['in', 'c', 'b', 'a'], ['in>a', 'in>b', 'in>c']));
    assert.deepEqual(topologicalOrder(level), ['in', 'a', 'b', 'c']);
  });

  it('counts a duplicated link twice and still orders the target once', () => {
    const level = planGraph(def(['a', 'b'], ['a>b', 'a>b']));
    assert.deepEqual(topologicalOrder(level), ['a', 'b']);
  });
});

describe('graph: restrictToAncestors', () => {
  // in → a → b → target ← side ; in → other (not needed)
  const level = planGraph(
    def(['in', 'a', 'b', 'side', 'target', 'other'], ['in>a', 'a>b', 'b>target', 'side>target', 'in>other']),
  );

  it('keeps the target and all its ancestors, in definition order', () => {
    const sub = restrictToAncestors(level, 'target');
    assert.deepEqual(ids(sub), ['in', 'a', 'b', 'side', 'target']);
    assert.deepEqual(incomingIds(sub, 'target'), ['b', 'side']);
    assert.deepEqual(sub.outgoing.get('in'), ['a'], 'the link to an unneeded node is gone');
    assert.equal(sub.byId.has('other'), false);
    assert.deepEqual(topologicalOrder(sub), ['in', 'side', 'a', 'b', 'target']);
  });

  it('stops at known nodes: their predecessors are not needed', () => {
    const sub = restrictToAncestors(level, 'target', new Set(['b']));
    assert.deepEqual(ids(sub), ['b', 'side', 'target']);
    assert.deepEqual(incomingIds(sub, 'target'), ['b', 'side']);
  });

  it('gives a known node no incoming links', () => {
    const diamond = planGraph(def(['in', 'k', 't'], ['in>k', 'in>t', 'k>t']));
    const sub = restrictToAncestors(diamond, 't', new Set(['k']));
    assert.deepEqual(ids(sub), ['in', 'k', 't'], 'in is still needed by t directly');
    assert.deepEqual(incomingIds(sub, 'k'), []);
    assert.deepEqual(incomingIds(sub, 't'), ['in', 'k']);
    assert.deepEqual(topologicalOrder(sub), ['in', 'k', 't']);
  });

  it('a known target is all there is', () => {
    const sub = restrictToAncestors(level, 'target', new Set(['target']));
    assert.deepEqual(ids(sub), ['target']);
    assert.deepEqual(incomingIds(sub, 'target'), []);
  });

  it('an unknown target leaves nothing to run', () => {
    const sub = restrictToAncestors(level, 'ghost');
    assert.deepEqual(ids(sub), []);
    assert.deepEqual(topologicalOrder(sub), []);
  });

  it('keeps the children of containers', () => {
    const d: RunDefinition = {
      nodes: [node('in'), node('loop', 'ForLoopNode'), node('li', 'InputNode', 'loop')],
      links: [link('in', 'loop')],
    };
    const full = planGraph(d);
    assert.equal(restrictToAncestors(full, 'loop').children.get('loop'), full.children.get('loop'));
  });
});

describe('graph: nodesRunningAlone', () => {
  const alone = (nodes: string[], links: string[]) => [...nodesRunningAlone(planGraph(def(nodes, links)))].sort();

  it('a chain: every node runs alone', () => {
    assert.deepEqual(alone(['a', 'b', 'c'], ['a>b', 'b>c']), ['a', 'b', 'c']);
  });

  it('a diamond: the two branches run beside each other, its ends alone', () => {
    assert.deepEqual(alone(['in', 'x', 'y', 'out'], ['in>x', 'in>y', 'x>out', 'y>out']), ['in', 'out']);
  });

  it('a node on no path with another runs beside it, and so does that one', () => {
    assert.deepEqual(alone(['a', 'b', 'lone'], ['a>b']), []);
  });

  it('a branch that joins nothing again runs beside what follows the fork', () => {
    // in → x → out and in → side: side may run while x or out do.
    assert.deepEqual(alone(['in', 'x', 'out', 'side'], ['in>x', 'x>out', 'in>side']), ['in']);
  });
});

import assert from 'node:assert/strict';
import { planGraph, topologicalOrder } from '../../src/engine/graph';
import type { NodeState } from '../../src/engine/node-inputs';
import { followUpRegion, pureRegionFrom, regionLevel } from '../../src/engine/pure-region';
import type { RunDefinition } from '../../src/engine/run-contract';

/** Nodes as `id:Type`, links as `a>b`. */
function def(nodes: string[], links: string[]): RunDefinition {
  return {
    nodes: nodes.map((spec) => {
      const [id, type] = spec.split(':') as [string, string];
      return { id, title: `t-${id}`, parent_id: null, node_type: type, config: { c: id } };
    }),
    links: links.map((spec) => {
      const [s, t] = spec.split('>') as [string, string];
      return { source_id: s, target_id: t, source_handle: null, target_handle: null };
    }),
  };
}

const done = (...ids: string[]) =>
  new Map<string, NodeState>(ids.map((id) => [id, { status: 'COMPLETED', output: { v: id } }]));
const members = (region: ReturnType<typeof pureRegionFrom>) => region?.nodes.map((n) => n.id) ?? null;

describe('engine: pure regions', () => {
  const graph = planGraph(
    def(
      [
        'in:InputNode',
        's:StaticValueNode',
        'm:MergeNode',
        'py:PythonFuncNode',
        'after:MergeNode',
        'out:OutputNode',
        'h:HumanInterventionNode',
        'o2:OutputNode',
      ],
      ['in>s', 'in>m', 's>m', 'm>out', 'in>py', 'py>after', 'm>after', 'm>h', 'h>o2'],
    ),
  );

  it('takes the pure successors whose every predecessor is in the region or has ended', () => {
    // `after` waits for the Python node too, `h` pauses (the engine runs it): neither joins.
    assert.deepEqual(members(pureRegionFrom(graph, 's', done('in'))), ['s', 'm', 'out']);
    // Once the Python node has ended, `after` joins as well.
    assert.deepEqual(members(pureRegionFrom(graph, 's', done('in', 'py'))), ['s', 'm', 'out', 'after']);
  });

  it('is null for a lone pure node, a node that is not pure, and leaves out excluded and ended nodes', () => {
    assert.equal(pureRegionFrom(graph, 'out', done('in', 's', 'm')), null);
    assert.equal(pureRegionFrom(graph, 'py', done('in')), null);
    assert.equal(pureRegionFrom(graph, 'h', done('in', 's', 'm')), null);
    assert.deepEqual(members(pureRegionFrom(graph, 's', done('in'), new Set(['m']))), null);
    assert.deepEqual(members(pureRegionFrom(graph, 'm', done('in', 's', 'out'))), null);
  });

  it('carries the ended predecessors it reads as preset nodes without config, and walks as a level of its own', () => {
    const region = pureRegionFrom(graph, 's', done('in', 'py'));
    assert.ok(region);
    assert.deepEqual(
      region.predecessors.map((n) => [n.id, n.title, n.node_type, n.config]),
      [
        ['in', 't-in', 'InputNode', {}],
        ['py', 't-py', 'PythonFuncNode', {}],
      ],
    );
    assert.deepEqual(
      region.preset.map(([id]) => id),
      ['in', 'py'],
    );
    assert.deepEqual(region.nodes.find((n) => n.id === 'm')?.config, { c: 'm' });
    const { level, preset } = regionLevel(region);
    assert.deepEqual(topologicalOrder(level), ['in', 'py', 's', 'm', 'out', 'after']);
    assert.deepEqual([...preset.keys()], ['in', 'py']);
    assert.deepEqual(level.incoming.get('in'), []);
    assert.deepEqual(
      level.incoming.get('after')?.map((l) => l.source_id),
      ['py', 'm'],
    );
  });
});

describe("engine: a short call's follow-up (followUpRegion)", () => {
  // in → call → r (router) → a → out; call → side (waits for py too); in → py
  const graph = planGraph(
    def(
      [
        'in:InputNode',
        'call:SingleLLMCallNode',
        'r:RouterNode',
        'a:MergeNode',
        'out:OutputNode',
        'py:PythonFuncNode',
        'side:MergeNode',
        'h:HumanInterventionNode',
      ],
      ['in>call', 'call>r', 'r>a', 'a>out', 'call>side', 'py>side', 'in>py', 'out>h'],
    ),
  );

  it('takes the pure nodes that can run once the call ends, stopping at engine nodes and at inputs still to come', () => {
    const region = followUpRegion(graph, 'call', done('in'));
    assert.deepEqual(members(region), ['r', 'a', 'out']);
    // The call is a predecessor whose state the call's activity adds: it is not preset.
    assert.deepEqual(
      region?.predecessors.map((p) => p.id),
      ['call'],
    );
    assert.deepEqual(region?.preset, []);
  });

  it('a successor whose other input has ended joins, with that input preset', () => {
    const region = followUpRegion(graph, 'call', done('in', 'py'));
    assert.deepEqual(members(region), ['r', 'side', 'a', 'out']);
    assert.deepEqual(region?.preset, [['py', { status: 'COMPLETED', output: { v: 'py' } }]]);
  });

  it("none when nothing pure follows, and never a node given its own input (a rerun's start)", () => {
    assert.equal(followUpRegion(graph, 'out', done('in', 'call', 'r', 'a')), null);
    assert.deepEqual(members(followUpRegion(graph, 'call', done('in'), new Set(['a']))), ['r']);
  });
});

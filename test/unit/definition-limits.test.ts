import assert from 'node:assert/strict';
import { definitionLimitIssues } from '../../src/definitions/definition-limits.js';
import { workflowCreateRequest } from '../../src/modules/workflows/workflows.schemas.js';

const LIMITS = { agentMaxIterations: 50, loopMaxTotalIterations: 10_000, subworkflowMaxDepth: 5 };
const node = (
  id: string,
  node_type: string,
  config: Record<string, unknown> = {},
  parent_id: string | null = null,
) => ({ id, node_type, parent_id, config });
const agent = (id: string, config: Record<string, unknown> = {}) => node(id, 'AgentNode', config);
const loop = (id: string, num_iterations: unknown, parent: string | null = null) =>
  node(id, 'ForLoopNode', { num_iterations }, parent);
const check = (nodes: ReturnType<typeof node>[], limits = LIMITS) => definitionLimitIssues({ nodes }, limits);

describe('definition limits', () => {
  it('refuses an AgentNode whose max_iterations is over the cap, naming node, field and limit', () => {
    assert.deepEqual(check([node('in', 'InputNode'), agent('a', { max_iterations: 51 })]), [
      {
        path: ['nodes', 1, 'config', 'max_iterations'],
        message: "AgentNode 'a' has max_iterations 51, over the maximum of 50 (SPUR_AGENT_MAX_ITERATIONS)",
      },
    ]);
    assert.deepEqual(check([agent('a', { max_iterations: 50 }), agent('b')]), []);
  });

  it('counts the default of an agent without max_iterations, as the engine runs it', () => {
    assert.deepEqual(check([agent('a')], { ...LIMITS, agentMaxIterations: 5 }), [
      {
        path: ['nodes', 0, 'config', 'max_iterations'],
        message:
          "AgentNode 'a' has max_iterations 10 (the default when unset), over the maximum of 5 (SPUR_AGENT_MAX_ITERATIONS)",
      },
    ]);
    assert.deepEqual(
      check([agent('a', { max_iterations: '500' })])[0]?.path,
      ['nodes', 0, 'config', 'max_iterations'],
      'a numeric string is a number to the engine',
    );
  });

  it('multiplies nested loops and reports each chain once, at the loop where it crosses the cap', () => {
    const nodes = [
      loop('outer', 100),
      loop('mid', 200, 'outer'),
      node('x', 'InputNode', {}, 'mid'),
      loop('inner', 5, 'mid'),
    ];
    assert.deepEqual(check(nodes), [
      {
        path: ['nodes', 1, 'config', 'num_iterations'],
        message:
          "ForLoopNode 'mid' runs 20000 iterations in all ('outer' 100 × 'mid' 200), over the maximum of 10000 loop iterations (SPUR_LOOP_MAX_TOTAL_ITERATIONS)",
      },
    ]);
  });

  it('accepts nested loops exactly at the cap, and siblings that are each under it', () => {
    assert.deepEqual(check([loop('outer', 100), loop('inner', 100, 'outer')]), []);
    assert.deepEqual(check([loop('a', 1000), loop('b', 1000)]), [], 'loops side by side do not multiply');
    assert.equal(check([loop('outer', 100), loop('inner', 101, 'outer')]).length, 1);
  });

  it('applies the total to a single loop when the cap is lower than it', () => {
    assert.deepEqual(check([loop('only', 600)], { ...LIMITS, loopMaxTotalIterations: 500 }), [
      {
        path: ['nodes', 0, 'config', 'num_iterations'],
        message:
          "ForLoopNode 'only' runs 600 iterations, over the maximum of 500 loop iterations (SPUR_LOOP_MAX_TOTAL_ITERATIONS)",
      },
    ]);
  });

  it('sees loops nested through other containers and survives a parent cycle', () => {
    const through = [loop('outer', 200), node('agent', 'AgentNode', {}, 'outer'), loop('inner', 100, 'agent')];
    assert.equal(check(through).length, 1);
    assert.deepEqual(check([loop('a', 2, 'b'), loop('b', 3, 'a')]), []);
  });

  it('turns issues into FastAPI-shaped 422 issues under definition in the create/replace body', () => {
    const body = workflowCreateRequest(LIMITS).safeParse({
      name: 'w',
      definition: {
        nodes: [
          { id: 'in', node_type: 'InputNode' },
          { id: 'a', node_type: 'AgentNode', config: { max_iterations: 1000 } },
        ],
        links: [],
      },
    });
    assert.equal(body.success, false);
    const issue = body.error?.issues[0];
    assert.deepEqual(issue?.path, ['definition', 'nodes', 1, 'config', 'max_iterations']);
    assert.match(issue?.message ?? '', /AgentNode 'a' has max_iterations 1000, over the maximum of 50/);
    assert.equal(
      workflowCreateRequest(LIMITS).safeParse({
        name: 'w',
        definition: { nodes: [{ id: 'a', node_type: 'AgentNode', config: { max_iterations: 50 } }], links: [] },
      }).success,
      true,
    );
  });
});

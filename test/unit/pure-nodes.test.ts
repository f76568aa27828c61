import assert from 'node:assert/strict';
import type { z } from 'zod';
import { NodeExecutionError } from '../../src/nodes/errors.js';
import { outputNode } from '../../src/nodes/input-output/output-node.js';
import { coalesceNode } from '../../src/nodes/logic/coalesce-node.js';
import { mergeNode } from '../../src/nodes/logic/merge-node.js';
import { pyFloat } from '../../src/nodes/logic/py-float.js';
import { pyStr } from '../../src/nodes/logic/py-str.js';
import { isTruthy } from '../../src/nodes/logic/py-truthy.js';
import { routerNode } from '../../src/nodes/logic/router-node.js';
import { staticValueNode } from '../../src/nodes/logic/static-value-node.js';
import { valueAtPath } from '../../src/nodes/paths.js';
import type { NodeExecutionContext, NodeInput, NodeOutput, NodeTypeDefinition } from '../../src/nodes/types.js';
import { devOutboundFetch } from '../support/outbound';

const ctx: NodeExecutionContext = {
  runId: 'run-1',
  nodeId: 'node-1',
  nodeTitle: 'Node_1',
  signal: new AbortController().signal,
  secret: async () => undefined,
  fetch: devOutboundFetch,
  heartbeat: () => undefined,
};

async function run<C extends z.ZodObject>(
  node: NodeTypeDefinition<C>,
  cfg: unknown,
  input: NodeInput,
): Promise<NodeOutput> {
  assert.ok(node.execute, `${node.name} has no execute`);
  return node.execute(node.config.parse(cfg), input, ctx);
}

function cond(variable: string, operator: string, value: unknown, logicalOperator = 'AND') {
  return { variable, operator, value, logicalOperator };
}

/** Runs a router with one route `r` holding `conditions`; true when `r` got a payload. */
async function routeTaken(conditions: unknown[], input: NodeInput): Promise<boolean> {
  const out = await run(routerNode, { route_map: { r: { conditions } } }, input);
  return out.r !== null;
}

const INPUT: NodeInput = {
  input_node: {
    question: 'hello world',
    n: 5,
    s: '12.5',
    flag: false,
    empty: '',
    list: [],
    tags: ['a', 'b'],
    nil: null,
  },
  LLM_1: { response: { text: 'hi', items: [{ id: 7 }, { id: 8 }] } },
};

describe('valueAtPath', () => {
  it('walks titles, nested fields and array indices', () => {
    assert.deepEqual(valueAtPath(INPUT, 'input_node.question'), { found: true, value: 'hello world' });
    assert.deepEqual(valueAtPath(INPUT, 'LLM_1.response.text'), { found: true, value: 'hi' });
    assert.deepEqual(valueAtPath(INPUT, 'LLM_1.response.items.1.id'), { found: true, value: 8 });
    assert.deepEqual(valueAtPath(INPUT, 'LLM_1'), { found: true, value: INPUT.LLM_1 });
  });

  it('tells a null value from a missing one', () => {
    assert.deepEqual(valueAtPath(INPUT, 'input_node.nil'), { found: true, value: null });
    assert.deepEqual(valueAtPath(INPUT, 'input_node.nope'), { found: false, value: undefined });
    assert.deepEqual(valueAtPath(INPUT, 'input_node.nil.x'), { found: false, value: undefined });
    assert.deepEqual(valueAtPath(INPUT, 'LLM_1.response.items.2'), { found: false, value: undefined });
    assert.deepEqual(valueAtPath(INPUT, 'input_node.question.length'), { found: false, value: undefined });
    assert.deepEqual(valueAtPath(INPUT, 'input_node.constructor'), { found: false, value: undefined });
    assert.deepEqual(valueAtPath(INPUT, ''), { found: false, value: undefined });
  });

  it('resolves dotted titles, longest prefix first, backtracking when the rest is missing', () => {
    const input = { 'a.b': { c: 1 }, a: { b: { c: 2, d: 3 } } };
    assert.deepEqual(valueAtPath(input, 'a.b.c'), { found: true, value: 1 });
    assert.deepEqual(valueAtPath(input, 'a.b.d'), { found: true, value: 3 });
    assert.deepEqual(valueAtPath({ 'v1.2': { x: 'y' } }, 'v1.2.x'), { found: true, value: 'y' });
  });
});

describe('OutputNode.execute', () => {
  it('maps every output key to the value at its path, nested or whole', async () => {
    const out = await run(
      outputNode,
      {
        output_map: {
          answer: 'LLM_1.response.text',
          second: 'LLM_1.response.items.1',
          whole: 'input_node.tags',
          none: 'input_node.nil',
        },
      },
      INPUT,
    );
    assert.deepEqual(out, { answer: 'hi', second: { id: 8 }, whole: ['a', 'b'], none: null });
  });

  it('fails with a NodeExecutionError naming the key and the path when a path is missing', async () => {
    await assert.rejects(
      run(outputNode, { output_map: { answer: 'LLM_1.response.missing' } }, INPUT),
      (err: unknown) => {
        assert.ok(err instanceof NodeExecutionError);
        assert.match(err.message, /'answer'/);
        assert.match(err.message, /'LLM_1\.response\.missing'/);
        return true;
      },
    );
  });

  it('passes the input through with an empty or absent map', async () => {
    assert.deepEqual(await run(outputNode, { output_map: {} }, INPUT), INPUT);
    assert.deepEqual(await run(outputNode, {}, { A: { x: 1 } }), { A: { x: 1 } });
  });
});

describe('RouterNode.execute', () => {
  it('emits a copy of the whole input on every matching route and null on the others', async () => {
    const out = await run(
      routerNode,
      {
        route_map: {
          hello: { conditions: [cond('input_node.question', 'contains', 'hello')] },
          big: { conditions: [cond('input_node.n', 'greater_than', 3)] },
          small: { conditions: [cond('input_node.n', 'less_than', 3)] },
        },
      },
      INPUT,
    );
    assert.deepEqual(Object.keys(out), ['hello', 'big', 'small']);
    assert.deepEqual(out.hello, INPUT);
    assert.deepEqual(out.big, INPUT);
    assert.equal(out.small, null);
    assert.notEqual(out.hello, out.big);
  });

  it('sets every route to null when none matches', async () => {
    const out = await run(
      routerNode,
      {
        route_map: {
          a: { conditions: [cond('input_node.question', 'equals', 'bye')] },
          b: { conditions: [cond('input_node.n', 'number_equals', '6')] },
        },
      },
      INPUT,
    );
    assert.deepEqual(out, { a: null, b: null });
  });

  it('does not match the default route (its one condition has an empty variable)', async () => {
    assert.deepEqual(await run(routerNode, {}, INPUT), { route1: null });
  });

  it('always matches a route with no conditions', async () => {
    const out = await run(routerNode, { route_map: { any: { conditions: [] } } }, { X: { v: 0 } });
    assert.deepEqual(out, { any: { X: { v: 0 } } });
  });

  it('combines conditions left to right without precedence', async () => {
    const yes = cond('input_node.n', 'number_equals', 5);
    const no = cond('input_node.n', 'number_equals', 4);
    // A OR B AND C = (A OR B) AND C: true OR false → true, AND false → false (precedence would say true).
    assert.equal(
      await routeTaken([yes, { ...no, logicalOperator: 'OR' }, { ...no, logicalOperator: 'AND' }], INPUT),
      false,
    );
    // A AND B OR C = (A AND B) OR C: false OR true → true.
    assert.equal(
      await routeTaken([yes, { ...no, logicalOperator: 'AND' }, { ...yes, logicalOperator: 'OR' }], INPUT),
      true,
    );
    // The first condition's operator is ignored; a null operator means AND.
    assert.equal(
      await routeTaken(
        [
          { ...no, logicalOperator: 'OR' },
          { ...yes, logicalOperator: null },
        ],
        INPUT,
      ),
      false,
    );
    assert.equal(
      await routeTaken(
        [
          { ...no, logicalOperator: 'AND' },
          { ...yes, logicalOperator: 'OR' },
        ],
        INPUT,
      ),
      true,
    );
  });

  it('evaluates each operator with Python semantics', async () => {
    const cases: [string, string, unknown, boolean][] = [
      ['input_node.question', 'contains', 'lo wo', true],
      ['input_node.question', 'contains', 'bye', false],
      ['input_node.n', 'contains', 5, true],
      ['input_node.tags', 'contains', "'a'", true],
      ['input_node.flag', 'contains', 'False', true],
      ['input_node.question', 'equals', 'hello world', true],
      ['input_node.question', 'equals', 'hello', false],
      ['input_node.n', 'equals', '5', true],
      ['input_node.flag', 'equals', 'false', false],
      ['input_node.flag', 'equals', 'False', true],
      ['input_node.n', 'number_equals', '5.0', true],
      ['input_node.s', 'number_equals', 12.5, true],
      ['input_node.s', 'greater_than', '12', true],
      ['input_node.s', 'greater_than', ' 13 ', false],
      ['input_node.s', 'less_than', '1_000', true],
      ['input_node.n', 'greater_than', 'abc', false],
      ['input_node.question', 'less_than', 10, false],
      ['input_node.n', 'number_equals', 'nan', false],
      ['input_node.n', 'greater_than', '', false],
      ['input_node.tags', 'number_equals', 2, false],
      ['input_node.question', 'starts_with', 'hell', true],
      ['input_node.question', 'starts_with', 'world', false],
      ['input_node.question', 'not_starts_with', 'world', true],
      ['input_node.question', 'not_starts_with', 'hell', false],
      ['input_node.empty', 'is_empty', null, true],
      ['input_node.list', 'is_empty', null, true],
      ['input_node.flag', 'is_empty', null, true],
      ['input_node.n', 'is_empty', null, false],
      ['input_node.tags', 'is_not_empty', null, true],
      ['input_node.empty', 'is_not_empty', null, false],
    ];
    for (const [variable, operator, value, expected] of cases) {
      assert.equal(
        await routeTaken([cond(variable, operator, value)], INPUT),
        expected,
        `${variable} ${operator} ${String(value)}`,
      );
    }
  });

  it('treats a missing or null path as matching only is_empty, and an empty variable as false', async () => {
    assert.equal(await routeTaken([cond('input_node.missing', 'is_empty', '')], INPUT), true);
    assert.equal(await routeTaken([cond('Nobody.x', 'is_empty', '')], INPUT), true);
    assert.equal(await routeTaken([cond('input_node.nil', 'is_empty', '')], INPUT), true);
    assert.equal(await routeTaken([cond('input_node.missing', 'is_not_empty', '')], INPUT), false);
    assert.equal(await routeTaken([cond('input_node.missing', 'contains', '')], INPUT), false);
    assert.equal(await routeTaken([cond('input_node.nil', 'not_starts_with', 'x')], INPUT), false);
    assert.equal(await routeTaken([cond('', 'is_empty', '')], INPUT), false);
  });

  it('hands out a copy: changing the payload leaves the input alone', async () => {
    const input: NodeInput = { In: { list: [1, 2], nested: { k: 'v' } } };
    const out = await run(routerNode, { route_map: { r: { conditions: [] } } }, input);
    const payload = out.r as { In: { list: number[]; nested: { k: string } } };
    payload.In.list.push(3);
    payload.In.nested.k = 'changed';
    assert.deepEqual(input, { In: { list: [1, 2], nested: { k: 'v' } } });
  });
});

describe('CoalesceNode.execute', () => {
  const input: NodeInput = { A: null, B: { b: 1 }, C: { c: 2 }, D: undefined };

  it('takes preferences first, then link order, returning the chosen output as is', async () => {
    assert.equal(await run(coalesceNode, { preferences: ['C', 'B'] }, input), input.C);
    assert.deepEqual(await run(coalesceNode, { preferences: ['A'] }, input), { b: 1 });
    assert.deepEqual(await run(coalesceNode, {}, { X: null, Y: { Router_1: { q: 1 } } }), { Router_1: { q: 1 } });
  });

  it('ignores a preference naming an absent title', async () => {
    assert.deepEqual(await run(coalesceNode, { preferences: ['Nope', 'C'] }, input), { c: 2 });
    assert.deepEqual(await run(coalesceNode, { preferences: ['Nope'] }, input), { b: 1 });
  });

  it('fails when every input is null', async () => {
    await assert.rejects(run(coalesceNode, {}, { A: null, B: null }), (err: unknown) => {
      assert.ok(err instanceof NodeExecutionError);
      assert.equal(err.message, 'Coalesce has no non-null input');
      return true;
    });
  });
});

describe('MergeNode.execute', () => {
  it('outputs every predecessor output keyed by title', async () => {
    const out = await run(mergeNode, {}, { A: { a: 1 }, Router_1: { input_node: { x: 'y' } } });
    assert.deepEqual(out, { A: { a: 1 }, Router_1: { input_node: { x: 'y' } } });
  });
});

describe('StaticValueNode.execute', () => {
  it('outputs a deep copy of its values', async () => {
    const cfg = staticValueNode.config.parse({ values: { greeting: 'hi', nested: { n: [1, 2] } } });
    assert.ok(staticValueNode.execute);
    const out = await staticValueNode.execute(cfg, { In: { x: 1 } }, ctx);
    assert.deepEqual(out, { greeting: 'hi', nested: { n: [1, 2] } });
    (out.nested as { n: number[] }).n.push(3);
    assert.deepEqual(cfg.values, { greeting: 'hi', nested: { n: [1, 2] } });
  });
});

describe('Python value helpers', () => {
  it('isTruthy follows bool()', () => {
    assert.deepEqual([null, undefined, false, 0, -0, '', [], {}].map(isTruthy), Array(8).fill(false));
    assert.deepEqual([true, 1, -1, Number.NaN, ' ', [0], { a: null }, '0'].map(isTruthy), Array(8).fill(true));
  });

  it('pyStr follows str()', () => {
    assert.equal(pyStr(null), 'None');
    assert.equal(pyStr(true), 'True');
    assert.equal(pyStr(5), '5');
    assert.equal(pyStr(0.5), '0.5');
    assert.equal(pyStr(0.00001), '1e-05');
    assert.equal(pyStr(1.5e-7), '1.5e-07');
    assert.equal(pyStr(['a', 1, null, { k: "it's" }]), `['a', 1, None, {'k': "it's"}]`);
    assert.equal(pyStr('plain'), 'plain');
  });

  it('pyFloat follows float()', () => {
    assert.equal(pyFloat(' 2.5 '), 2.5);
    assert.equal(pyFloat('1_000'), 1000);
    assert.equal(pyFloat('-1e3'), -1000);
    assert.equal(pyFloat('.5'), 0.5);
    assert.equal(pyFloat('-inf'), Number.NEGATIVE_INFINITY);
    assert.equal(pyFloat(true), 1);
    assert.ok(Number.isNaN(pyFloat('NaN')));
    assert.equal(pyFloat(''), undefined);
    assert.equal(pyFloat('1__0'), undefined);
    assert.equal(pyFloat('0x10'), undefined);
    assert.equal(pyFloat(null), undefined);
    assert.equal(pyFloat([1]), undefined);
  });
});

import assert from 'node:assert/strict';
import { stubOfJsonSchema, stubOutput } from '../../src/engine/dry-run';
import { NODE_TYPES } from '../../src/nodes/registry';

describe('dry runs: which nodes act, and the stubs they hand on', () => {
  /** docs/evals.md's table: the node types that send nothing in a dry run, whatever their config. */
  const ALWAYS_ACT = ['GitHubCreateIssueNode', 'RedditCreatePostNode', 'SendEmailNode', 'SlackNotifyNode'];

  it('declares acting exactly the node types docs/evals.md lists, and HTTPRequestNode by its method', () => {
    const acting = NODE_TYPES.filter((t) => t.name !== 'HTTPRequestNode' && t.acts?.(t.config.parse({}))).map(
      (t) => t.name,
    );
    assert.deepEqual(acting.sort(), ALWAYS_ACT);
    const http = NODE_TYPES.find((t) => t.name === 'HTTPRequestNode');
    const actsWith = (method: string) => http?.acts?.(http.config.parse({ method })) === true;
    assert.deepEqual(['GET', 'HEAD', 'OPTIONS', 'POST', 'PUT', 'PATCH', 'DELETE'].map(actsWith), [
      false,
      false,
      false,
      true,
      true,
      true,
      true,
    ]);
  });

  it('stubs a schema with every property, defaults and constants kept, the first of an enum or union', () => {
    const schema = {
      type: 'object',
      properties: {
        s: { type: 'string' },
        n: { type: 'integer' },
        f: { type: 'number' },
        b: { type: 'boolean' },
        list: { type: 'array', items: { type: 'string' } },
        maybe: { type: ['null', 'string'] },
        kind: { enum: ['first', 'second'] },
        fixed: { const: 7 },
        given: { type: 'string', default: 'hello' },
        either: { anyOf: [{ type: 'integer' }, { type: 'string' }] },
        nested: { type: 'object', properties: { deep: { type: 'boolean' } } },
        open: { type: 'object' },
      },
    };
    assert.deepEqual(stubOfJsonSchema(schema), {
      s: '',
      n: 0,
      f: 0,
      b: false,
      list: [],
      maybe: '',
      kind: 'first',
      fixed: 7,
      given: 'hello',
      either: 0,
      nested: { deep: false },
      open: {},
    });
  });

  it('answers {} for a schema that is not an object, and stops at a depth bound on a self-nesting one', () => {
    assert.deepEqual(stubOutput({ type: 'string' }), {});
    assert.deepEqual(stubOutput(null), {});
    let deep: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < 40; i++) deep = { type: 'object', properties: { next: deep } };
    let value = stubOutput(deep) as Record<string, unknown> | null;
    let depth = 0;
    while (value && typeof value === 'object') {
      value = value.next as Record<string, unknown> | null;
      depth++;
    }
    assert.ok(depth <= 14, `stopped at depth ${depth}`);
  });
});

import assert from 'node:assert/strict';
import { z } from 'zod';
import { PageQuery } from '../../src/http/pagination.js';
import { type RequestPart, toValidationDetails } from '../../src/http/validation-details.js';

function details(schema: z.ZodType, raw: unknown, part: RequestPart) {
  const result = schema.safeParse(raw);
  if (result.success) assert.fail(`expected ${JSON.stringify(raw)} to be rejected`);
  return toValidationDetails(result.error.issues, part, raw);
}

const CreateBody = z.object({ name: z.string(), description: z.string().default('') });
const ActionBody = z.object({ action: z.enum(['APPROVE', 'DECLINE', 'OVERRIDE']) });

describe('toValidationDetails', () => {
  describe('query paging', () => {
    it('page=0 → greater_than_equal with the raw string as input', () => {
      assert.deepEqual(details(PageQuery, { page: '0' }, 'query'), [
        {
          type: 'greater_than_equal',
          loc: ['query', 'page'],
          msg: 'Input should be greater than or equal to 1',
          input: '0',
          ctx: { ge: 1 },
        },
      ]);
    });

    it('page_size=101 → less_than_equal', () => {
      assert.deepEqual(details(PageQuery, { page_size: '101' }, 'query'), [
        {
          type: 'less_than_equal',
          loc: ['query', 'page_size'],
          msg: 'Input should be less than or equal to 100',
          input: '101',
          ctx: { le: 100 },
        },
      ]);
    });

    it('page_size=0 → greater_than_equal on page_size', () => {
      const [detail] = details(PageQuery, { page: '2', page_size: '0' }, 'query');
      assert.deepEqual(detail, {
        type: 'greater_than_equal',
        loc: ['query', 'page_size'],
        msg: 'Input should be greater than or equal to 1',
        input: '0',
        ctx: { ge: 1 },
      });
    });

    it("page=abc → int_parsing with pydantic's message", () => {
      assert.deepEqual(details(PageQuery, { page: 'abc' }, 'query'), [
        {
          type: 'int_parsing',
          loc: ['query', 'page'],
          msg: 'Input should be a valid integer, unable to parse string as an integer',
          input: 'abc',
        },
      ]);
    });

    it('page=1.5 → int_parsing', () => {
      const [detail] = details(PageQuery, { page: '1.5' }, 'query');
      assert.equal(detail!.type, 'int_parsing');
      assert.equal(detail!.input, '1.5');
    });

    it('reports both bad parameters, in schema order', () => {
      assert.deepEqual(
        details(PageQuery, { page: '0', page_size: '500' }, 'query').map((d) => [d.type, d.loc]),
        [
          ['greater_than_equal', ['query', 'page']],
          ['less_than_equal', ['query', 'page_size']],
        ],
      );
    });
  });

  describe('body', () => {
    it('a missing field → missing, with the whole body as input', () => {
      const body = { description: 'd' };
      assert.deepEqual(details(CreateBody, body, 'body'), [
        { type: 'missing', loc: ['body', 'name'], msg: 'Field required', input: { description: 'd' } },
      ]);
    });

    it('no body at all → missing at ["body"] with input null', () => {
      assert.deepEqual(details(CreateBody, undefined, 'body'), [
        { type: 'missing', loc: ['body'], msg: 'Field required', input: null },
      ]);
    });

    it('a missing nested field → missing, with the enclosing object as input', () => {
      const schema = z.object({ definition: z.object({ nodes: z.array(z.unknown()), links: z.array(z.unknown()) }) });
      assert.deepEqual(details(schema, { definition: { nodes: [] } }, 'body'), [
        { type: 'missing', loc: ['body', 'definition', 'links'], msg: 'Field required', input: { nodes: [] } },
      ]);
    });

    it('a number where a string belongs → string_type', () => {
      assert.deepEqual(details(CreateBody, { name: 42 }, 'body'), [
        { type: 'string_type', loc: ['body', 'name'], msg: 'Input should be a valid string', input: 42 },
      ]);
    });

    it('null where a string belongs → string_type with input null', () => {
      assert.deepEqual(details(CreateBody, { name: null }, 'body'), [
        { type: 'string_type', loc: ['body', 'name'], msg: 'Input should be a valid string', input: null },
      ]);
    });

    it("other wrong types map to pydantic's names", () => {
      const schema = z.object({ n: z.number(), b: z.boolean(), o: z.object({}), l: z.array(z.string()) });
      assert.deepEqual(
        details(schema, { n: 'x', b: 'yes', o: [], l: {} }, 'body').map((d) => [d.type, d.msg]),
        [
          ['float_type', 'Input should be a valid number'],
          ['bool_type', 'Input should be a valid boolean'],
          ['dict_type', 'Input should be a valid dictionary'],
          ['list_type', 'Input should be a valid list'],
        ],
      );
    });

    it('an array item is located by index', () => {
      const schema = z.object({ tags: z.array(z.string()) });
      assert.deepEqual(details(schema, { tags: ['a', 7] }, 'body'), [
        { type: 'string_type', loc: ['body', 'tags', 1], msg: 'Input should be a valid string', input: 7 },
      ]);
    });

    it('a bad enum value → enum, listing the choices', () => {
      assert.deepEqual(details(ActionBody, { action: 'MAYBE' }, 'body'), [
        {
          type: 'enum',
          loc: ['body', 'action'],
          msg: "Input should be 'APPROVE', 'DECLINE' or 'OVERRIDE'",
          input: 'MAYBE',
          ctx: { expected: "'APPROVE', 'DECLINE' or 'OVERRIDE'" },
        },
      ]);
    });

    it('a two-value enum is joined with "or"', () => {
      const [detail] = details(z.object({ x: z.enum(['A', 'B']) }), { x: 'C' }, 'body');
      assert.equal(detail!.msg, "Input should be 'A' or 'B'");
    });

    it('a too short string → string_too_short', () => {
      assert.deepEqual(details(z.object({ s: z.string().min(3) }), { s: 'ab' }, 'body'), [
        {
          type: 'string_too_short',
          loc: ['body', 's'],
          msg: 'String should have at least 3 characters',
          input: 'ab',
          ctx: { min_length: 3 },
        },
      ]);
    });

    it('exclusive bounds → greater_than / less_than', () => {
      const schema = z.object({ a: z.number().gt(0), b: z.number().lt(10) });
      assert.deepEqual(
        details(schema, { a: 0, b: 10 }, 'body').map((d) => [d.type, d.msg, d.ctx]),
        [
          ['greater_than', 'Input should be greater than 0', { gt: 0 }],
          ['less_than', 'Input should be less than 10', { lt: 10 }],
        ],
      );
    });
  });

  describe('custom issues', () => {
    const assertion = z.object({ definition: z.unknown() }).superRefine((_v, ctx) => {
      ctx.addIssue({
        code: 'custom',
        message: "SingleLLMCallNode 'a' needs config.llm_info",
        path: ['definition', 'nodes', 0],
        params: { pydanticType: 'assertion_error' },
      });
    });
    const valueError = z.object({ definition: z.unknown() }).superRefine((_v, ctx) => {
      ctx.addIssue({
        code: 'custom',
        message: 'Chatbot input node must have the following mandatory fields: user_message',
        path: ['definition'],
      });
    });

    it('pydanticType assertion_error → assertion_error with "Assertion failed, "', () => {
      const node = { id: 'a', node_type: 'SingleLLMCallNode' };
      const [detail] = details(assertion, { definition: { nodes: [node], links: [] } }, 'body');
      assert.equal(detail!.type, 'assertion_error');
      assert.deepEqual(detail!.loc, ['body', 'definition', 'nodes', 0]);
      assert.ok(detail!.msg.startsWith('Assertion failed, '), detail!.msg);
      assert.equal(detail!.msg, "Assertion failed, SingleLLMCallNode 'a' needs config.llm_info");
      assert.deepEqual(detail!.input, node);
    });

    it('any other custom issue → value_error with "Value error, " and ctx.error {}', () => {
      const definition = { nodes: [], links: [], spur_type: 'chatbot' };
      assert.deepEqual(details(valueError, { definition }, 'body'), [
        {
          type: 'value_error',
          loc: ['body', 'definition'],
          msg: 'Value error, Chatbot input node must have the following mandatory fields: user_message',
          input: definition,
          ctx: { error: {} },
        },
      ]);
    });

    it('pydanticType value_error is a value_error too', () => {
      const schema = z.string().superRefine((_v, ctx) => {
        ctx.addIssue({ code: 'custom', message: 'bad', params: { pydanticType: 'value_error' } });
      });
      assert.deepEqual(details(schema, 'x', 'path'), [
        { type: 'value_error', loc: ['path'], msg: 'Value error, bad', input: 'x', ctx: { error: {} } },
      ]);
    });
  });

  describe('other issues', () => {
    it('unknown keys on a strict object → one extra_forbidden per key, its loc naming it', () => {
      const schema = z.object({ a: z.string(), inner: z.strictObject({ c: z.number() }) }).strict();
      assert.deepEqual(details(schema, { a: 'x', b: 1, inner: { c: 1, secret: 's' } }, 'body'), [
        {
          type: 'extra_forbidden',
          loc: ['body', 'inner', 'secret'],
          msg: 'Extra inputs are not permitted',
          input: 's',
        },
        { type: 'extra_forbidden', loc: ['body', 'b'], msg: 'Extra inputs are not permitted', input: 1 },
      ]);
    });

    it('query booleans that do not parse → bool_parsing', () => {
      const [detail] = details(z.object({ flag: z.boolean() }), { flag: 'maybe' }, 'query');
      assert.deepEqual(detail, {
        type: 'bool_parsing',
        loc: ['query', 'flag'],
        msg: 'Input should be a valid boolean, unable to interpret input',
        input: 'maybe',
      });
    });

    it('returns one item per issue and nothing for no issues', () => {
      assert.deepEqual(toValidationDetails([], 'body', {}), []);
    });
  });
});

describe('integer query parameters parse as pydantic does', () => {
  for (const raw of ['', '1e2', '0x10', '1.5', ' ']) {
    it(`treats page=${JSON.stringify(raw)} as int_parsing`, () => {
      const result = PageQuery.safeParse({ page: raw });
      assert.equal(result.success, false);
      const [detail] = toValidationDetails(result.error!.issues, 'query', { page: raw });
      assert.equal(detail!.type, 'int_parsing');
      assert.equal(detail!.input, raw);
    });
  }
  it('accepts signed digits and applies defaults', () => {
    assert.deepEqual(PageQuery.parse({ page: '+2' }), { page: 2, page_size: 10 });
    assert.deepEqual(PageQuery.parse({}), { page: 1, page_size: 10 });
  });
});

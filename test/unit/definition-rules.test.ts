import assert from 'node:assert/strict';
import { prefixedModel } from '../../src/definitions/definition-normalize.js';
import { checkDefinitionRules } from '../../src/definitions/definition-rules.js';
import { MAX_LOOP_ITERATIONS } from '../../src/engine/for-loop.js';
import {
  SpurTypeSchema,
  type WorkflowDefinition,
  WorkflowDefinitionSchema,
  WorkflowNodeSchema,
} from '../../src/definitions/definition.schema.js';

interface SimpleIssue {
  code: string;
  path: PropertyKey[];
  message: string;
  kind?: string;
}

function ok(raw: unknown): WorkflowDefinition {
  const result = WorkflowDefinitionSchema.safeParse(raw);
  if (!result.success) assert.fail(`expected a valid definition, got ${JSON.stringify(result.error.issues)}`);
  return result.data;
}

function issues(raw: unknown): SimpleIssue[] {
  const result = WorkflowDefinitionSchema.safeParse(raw);
  if (result.success) assert.fail(`expected a rejection, got ${JSON.stringify(result.data)}`);
  return result.error.issues.map((issue) => {
    const kind = (issue as { params?: { pydanticType?: string } }).params?.pydanticType;
    return { code: issue.code, path: issue.path, message: issue.message, ...(kind ? { kind } : {}) };
  });
}

const node = (id: string, node_type = 'StaticValueNode', extra: Record<string, unknown> = {}) => ({
  id,
  node_type,
  ...extra,
});
const llm = (id: string, model: string, node_type = 'SingleLLMCallNode') =>
  node(id, node_type, { config: { llm_info: { model, temperature: 0.7 }, system_message: 's' } });
const def = (nodes: unknown[], links: unknown[] = [], extra: Record<string, unknown> = {}) => ({
  nodes,
  links,
  ...extra,
});

const jsonSchema = (props: Record<string, unknown>) => JSON.stringify({ type: 'object', properties: props });
const str = { type: 'string' };
const chatInput = (props: Record<string, unknown> | string, extra: Record<string, unknown> = {}) =>
  node('input_node', 'InputNode', {
    config: { output_json_schema: typeof props === 'string' ? props : jsonSchema(props) },
    ...extra,
  });
const chatOutput = (props: Record<string, unknown> | string) =>
  node('output_node', 'OutputNode', {
    config: { output_json_schema: typeof props === 'string' ? props : jsonSchema(props) },
  });
const goodInput = () => chatInput({ user_message: str, session_id: str, message_history: { type: 'array' } });
const goodOutput = () => chatOutput({ assistant_message: str });

describe('workflow definition schema and rules', () => {
  describe('defaults and shape', () => {
    it('fills every default and coerces numeric coordinate strings', () => {
      const parsed = ok(
        def(
          [node('n1', 'InputNode', { coordinates: { x: '12.5', y: '-3' }, dimensions: { width: '100', height: 50 } })],
          [{ source_id: 'n1', target_id: 'n1' }],
        ),
      );
      assert.deepEqual(parsed, {
        nodes: [
          {
            id: 'n1',
            title: 'n1',
            parent_id: null,
            node_type: 'InputNode',
            config: {},
            coordinates: { x: 12.5, y: -3 },
            dimensions: { width: 100, height: 50 },
            subworkflow: null,
          },
        ],
        links: [{ source_id: 'n1', target_id: 'n1', source_handle: null, target_handle: null }],
        test_inputs: [],
        spur_type: 'workflow',
      });
    });

    it('serialises fields in PySpur order', () => {
      const parsed = ok(
        def([node('n1', 'InputNode', { coordinates: { y: 1, x: 2 } })], [{ target_id: 'n1', source_id: 'n1' }], {
          spur_type: 'agent',
          test_inputs: [],
        }),
      );
      assert.deepEqual(Object.keys(parsed), ['nodes', 'links', 'test_inputs', 'spur_type']);
      assert.deepEqual(Object.keys(parsed.nodes[0]!), [
        'id',
        'title',
        'parent_id',
        'node_type',
        'config',
        'coordinates',
        'dimensions',
        'subworkflow',
      ]);
      assert.deepEqual(Object.keys(parsed.links[0]!), ['source_id', 'target_id', 'source_handle', 'target_handle']);
    });

    it('replaces a blank title by the node id and keeps any other title as given', () => {
      const parsed = ok(
        def([
          node('a', 'X', { title: '' }),
          node('b', 'X', { title: '   ' }),
          node('c', 'X', { title: ' My Title ' }),
          node('d'),
        ]),
      );
      assert.deepEqual(
        parsed.nodes.map((n) => n.title),
        ['a', 'b', ' My Title ', 'd'],
      );
    });

    it('stores config and test_inputs as given, without filling node defaults', () => {
      const parsed = ok(
        def([node('a', 'StaticValueNode', { config: { values: { k: 1 }, anything: [1, 2] } })], [], {
          test_inputs: [{ id: 1733466671014, input_1: 'hello' }],
        }),
      );
      assert.deepEqual(parsed.nodes[0]!.config, { values: { k: 1 }, anything: [1, 2] });
      assert.deepEqual(parsed.test_inputs, [{ id: 1733466671014, input_1: 'hello' }]);
    });

    it('keeps parent_id when given', () => {
      assert.equal(
        ok(def([node('loop', 'ForLoopNode'), node('child', 'X', { parent_id: 'loop' })])).nodes[1]!.parent_id,
        'loop',
      );
    });

    it('drops extra keys on the definition, nodes, links and coordinates', () => {
      const parsed = ok({
        nodes: [{ id: 'a', node_type: 'X', bogus: 1, coordinates: { x: 1, y: 2, z: 3 } }, node('b')],
        links: [{ source_id: 'a', target_id: 'b', weight: 5 }],
        name: 'not part of a definition',
      });
      assert.ok(!('name' in parsed));
      assert.ok(!('bogus' in parsed.nodes[0]!));
      assert.deepEqual(parsed.nodes[0]!.coordinates, { x: 1, y: 2 });
      assert.ok(!('weight' in parsed.links[0]!));
    });

    it('rejects a definition without nodes or links', () => {
      assert.deepEqual(
        issues({ links: [] }).map((i) => [i.code, i.path]),
        [['invalid_type', ['nodes']]],
      );
      assert.deepEqual(
        issues({ nodes: [] }).map((i) => [i.code, i.path]),
        [['invalid_type', ['links']]],
      );
    });

    it('rejects a node without node_type and a link without target_id', () => {
      assert.deepEqual(
        issues(def([{ id: 'a' }])).map((i) => i.path),
        [['nodes', 0, 'node_type']],
      );
      assert.deepEqual(
        issues(def([node('a')], [{ source_id: 'a' }])).map((i) => i.path),
        [['links', 0, 'target_id']],
      );
    });

    it('rejects non-numeric and incomplete coordinates', () => {
      assert.deepEqual(
        issues(def([node('a', 'X', { coordinates: { x: 'abc', y: 1 } })])).map((i) => i.path),
        [['nodes', 0, 'coordinates', 'x']],
      );
      assert.deepEqual(
        issues(def([node('a', 'X', { coordinates: { x: 1 } })])).map((i) => i.path),
        [['nodes', 0, 'coordinates', 'y']],
      );
    });

    it('WorkflowNodeSchema fills the node defaults on its own', () => {
      const parsed = WorkflowNodeSchema.parse({ id: 'a', node_type: 'X', coordinates: { x: '1', y: '2.5' } });
      assert.equal(parsed.parent_id, null);
      assert.deepEqual(parsed.config, {});
      assert.deepEqual(parsed.coordinates, { x: 1, y: 2.5 });
      assert.equal(parsed.dimensions, null);
      assert.equal(parsed.subworkflow, null);
      assert.equal(WorkflowNodeSchema.safeParse({ id: 'a' }).success, false);
    });
  });

  describe('spur_type', () => {
    it('defaults to workflow and accepts either case, emitting lowercase', () => {
      assert.equal(ok(def([])).spur_type, 'workflow');
      assert.equal(ok(def([], [], { spur_type: 'CHATBOT' })).spur_type, 'chatbot');
      assert.equal(ok(def([], [], { spur_type: 'Agent' })).spur_type, 'agent');
      assert.equal(SpurTypeSchema.parse('WORKFLOW'), 'workflow');
      assert.equal(SpurTypeSchema.parse('chatbot'), 'chatbot');
    });

    it('rejects an unknown spur_type', () => {
      assert.deepEqual(
        issues(def([], [], { spur_type: 'bot' })).map((i) => [i.code, i.path]),
        [['invalid_value', ['spur_type']]],
      );
      assert.equal(SpurTypeSchema.safeParse('robot').success, false);
      assert.equal(SpurTypeSchema.safeParse(1).success, false);
    });
  });

  describe('graph rules', () => {
    it('rejects a duplicate node id at the duplicate', () => {
      assert.deepEqual(issues(def([node('a'), node('b'), node('a')])), [
        { code: 'custom', path: ['nodes', 2, 'id'], message: "Duplicate node id 'a'", kind: 'value_error' },
      ]);
      assert.deepEqual(
        issues(def([node('x'), node('x')])).map((i) => i.path),
        [['nodes', 1, 'id']],
      );
    });

    it('rejects links to and from nodes that do not exist', () => {
      assert.deepEqual(issues(def([node('a')], [{ source_id: 'a', target_id: 'b' }])), [
        {
          code: 'custom',
          path: ['links', 0, 'target_id'],
          message: "Link target_id 'b' is not a node of this workflow",
          kind: 'value_error',
        },
      ]);
      assert.deepEqual(
        issues(
          def(
            [node('a')],
            [
              { source_id: 'a', target_id: 'a' },
              { source_id: 'ghost', target_id: 'gone' },
            ],
          ),
        ).map((i) => [i.path, i.message]),
        [
          [['links', 1, 'source_id'], "Link source_id 'ghost' is not a node of this workflow"],
          [['links', 1, 'target_id'], "Link target_id 'gone' is not a node of this workflow"],
        ],
      );
    });

    it('rejects a second top-level InputNode', () => {
      assert.deepEqual(issues(def([node('in1', 'InputNode'), node('in2', 'InputNode')])), [
        {
          code: 'custom',
          path: ['nodes', 1],
          message: 'A workflow can have at most one top-level InputNode',
          kind: 'value_error',
        },
      ]);
      assert.deepEqual(
        issues(def([node('in1', 'InputNode'), node('x'), node('in2', 'InputNode'), node('in3', 'InputNode')])).map(
          (i) => i.path,
        ),
        [
          ['nodes', 2],
          ['nodes', 3],
        ],
      );
    });

    it('does not count an InputNode that has a parent', () => {
      const parsed = ok(
        def([
          node('in', 'InputNode'),
          node('loop', 'ForLoopNode'),
          node('loop_in', 'InputNode', { parent_id: 'loop' }),
        ]),
      );
      assert.equal(parsed.nodes.length, 3);
    });

    it('caps a ForLoopNode at MAX_LOOP_ITERATIONS iterations', () => {
      assert.equal(
        ok(def([node('loop', 'ForLoopNode', { config: { num_iterations: MAX_LOOP_ITERATIONS } })])).nodes.length,
        1,
      );
      assert.deepEqual(
        issues(def([node('a'), node('loop', 'ForLoopNode', { config: { num_iterations: MAX_LOOP_ITERATIONS + 1 } })])),
        [
          {
            code: 'custom',
            path: ['nodes', 1, 'config', 'num_iterations'],
            message: `ForLoopNode 'loop' has num_iterations ${MAX_LOOP_ITERATIONS + 1}, over the maximum of ${MAX_LOOP_ITERATIONS}`,
            kind: 'value_error',
          },
        ],
      );
    });

    it('accepts a workflow without any InputNode', () => {
      assert.equal(ok(def([node('a')])).nodes.length, 1);
    });

    it('reports every broken rule at once', () => {
      const found = issues(
        def(
          [node('a'), node('a'), node('i1', 'InputNode'), node('i2', 'InputNode')],
          [{ source_id: 'a', target_id: 'z' }],
        ),
      );
      assert.deepEqual(
        found.map((i) => i.path),
        [
          ['nodes', 1, 'id'],
          ['links', 0, 'target_id'],
          ['nodes', 3],
        ],
      );
    });

    it('checkDefinitionRules returns no issues for a sound definition', () => {
      assert.deepEqual(checkDefinitionRules({ nodes: [], links: [], test_inputs: [], spur_type: 'workflow' }), []);
    });
  });

  describe('LLM nodes', () => {
    it('rejects SingleLLMCallNode and BestOfNNode without llm_info as an assertion error', () => {
      assert.deepEqual(issues(def([node('llm', 'SingleLLMCallNode')])), [
        {
          code: 'custom',
          path: ['nodes', 0],
          message: "SingleLLMCallNode 'llm' needs config.llm_info",
          kind: 'assertion_error',
        },
      ]);
      assert.deepEqual(issues(def([node('a'), node('best', 'BestOfNNode', { config: { llm_info: null } })])), [
        {
          code: 'custom',
          path: ['nodes', 1],
          message: "BestOfNNode 'best' needs config.llm_info",
          kind: 'assertion_error',
        },
      ]);
      assert.equal(
        issues(def([node('llm', 'SingleLLMCallNode', { config: { llm_info: ['gpt-4o'] } })]))[0]!.kind,
        'assertion_error',
      );
    });

    it('rejects llm_info without a string model', () => {
      assert.deepEqual(issues(def([node('llm', 'SingleLLMCallNode', { config: { llm_info: {} } })])), [
        {
          code: 'custom',
          path: ['nodes', 0, 'config', 'llm_info', 'model'],
          message: "SingleLLMCallNode 'llm' needs config.llm_info.model",
          kind: 'value_error',
        },
      ]);
    });

    it('does not require llm_info on other node types', () => {
      assert.deepEqual(ok(def([node('agent', 'AgentNode')])).nodes[0]!.config, {});
    });

    it('prefixes bare OpenAI and Anthropic model names', () => {
      const parsed = ok(
        def([
          llm('a', 'gpt-4o'),
          llm('b', 'claude-3-5-sonnet-latest'),
          llm('c', 'o1-mini', 'BestOfNNode'),
          llm('d', 'gemini/gemini-1.5-pro'),
          llm('e', 'chatgpt-4o-latest'),
          llm('f', 'openai/gpt-4o'),
          llm('g', 'ollama/llama3.2'),
        ]),
      );
      const models = parsed.nodes.map((n) => (n.config.llm_info as { model: string }).model);
      assert.deepEqual(models, [
        'openai/gpt-4o',
        'anthropic/claude-3-5-sonnet-latest',
        'openai/o1-mini',
        'gemini/gemini-1.5-pro',
        'openai/chatgpt-4o-latest',
        'openai/gpt-4o',
        'ollama/llama3.2',
      ]);
    });

    it('keeps the other llm_info and config keys', () => {
      const parsed = ok(def([llm('a', 'gpt-4o')]));
      assert.deepEqual(parsed.nodes[0]!.config, {
        llm_info: { model: 'openai/gpt-4o', temperature: 0.7 },
        system_message: 's',
      });
    });

    it('does not rewrite a model field on other node types', () => {
      const parsed = ok(def([node('x', 'AgentNode', { config: { llm_info: { model: 'gpt-4o' } } })]));
      assert.deepEqual(parsed.nodes[0]!.config, { llm_info: { model: 'gpt-4o' } });
    });

    it('prefixedModel follows the gpt/chatgpt/o1/claude prefixes', () => {
      assert.equal(prefixedModel('gpt-4o-mini'), 'openai/gpt-4o-mini');
      assert.equal(prefixedModel('o1'), 'openai/o1');
      assert.equal(prefixedModel('claude-3-opus'), 'anthropic/claude-3-opus');
      assert.equal(prefixedModel('anthropic/claude-3-opus'), 'anthropic/claude-3-opus');
      assert.equal(prefixedModel('deepseek/deepseek-chat'), 'deepseek/deepseek-chat');
    });
  });

  describe('router links', () => {
    it('rewrites target_handle of links out of a RouterNode to "<rid>.<route>"', () => {
      const nodes = [node('rid', 'RouterNode'), node('a'), node('b'), node('c'), node('d')];
      const links = [
        { source_id: 'rid', target_id: 'a', source_handle: 'route1', target_handle: null },
        { source_id: 'rid', target_id: 'b', source_handle: 'route1', target_handle: 'route1' },
        { source_id: 'rid', target_id: 'c', source_handle: 'route1', target_handle: 'rid.route1' },
        { source_id: 'rid', target_id: 'd', source_handle: 'route2', target_handle: 'x.y.route2' },
      ];
      const parsed = ok(def(nodes, links));
      assert.deepEqual(
        parsed.links.map((l) => l.target_handle),
        ['rid.rid', 'rid.route1', 'rid.route1', 'rid.route2'],
      );
      assert.deepEqual(
        parsed.links.map((l) => l.source_handle),
        ['route1', 'route1', 'route1', 'route2'],
      );
    });

    it('treats a missing target_handle like null', () => {
      const parsed = ok(def([node('r', 'RouterNode'), node('a')], [{ source_id: 'r', target_id: 'a' }]));
      assert.equal(parsed.links[0]!.target_handle, 'r.r');
    });

    it('leaves links that do not start at a router untouched', () => {
      const nodes = [node('r', 'RouterNode'), node('a'), node('b')];
      const links = [
        { source_id: 'a', target_id: 'r', source_handle: null, target_handle: null },
        { source_id: 'a', target_id: 'b', source_handle: 'out', target_handle: 'x.y.z' },
        { source_id: 'b', target_id: 'a', source_handle: null, target_handle: 'route1' },
      ];
      const parsed = ok(def(nodes, links));
      assert.deepEqual(parsed.links, links);
    });
  });

  describe('chatbot rules', () => {
    const chatbot = (nodes: unknown[], spur_type = 'chatbot') => def(nodes, [], { spur_type });
    const inputIssue = (list: string) => ({
      code: 'custom',
      path: [],
      message: `Chatbot input node must have the following mandatory fields: ${list}`,
      kind: 'value_error',
    });

    it('accepts a chatbot whose I/O nodes carry the fields', () => {
      const parsed = ok(chatbot([goodInput(), goodOutput()]));
      assert.equal(parsed.spur_type, 'chatbot');
      assert.equal(parsed.nodes.length, 2);
    });

    it('accepts a chatbot with no nodes', () => {
      assert.deepEqual(ok(chatbot([])), { nodes: [], links: [], test_inputs: [], spur_type: 'chatbot' });
    });

    it('requires user_message and session_id on the input node', () => {
      assert.deepEqual(issues(chatbot([chatInput({ input_1: str })])), [inputIssue('user_message, session_id')]);
      assert.deepEqual(issues(chatbot([chatInput({ session_id: str })])), [inputIssue('user_message')]);
      assert.deepEqual(issues(chatbot([chatInput({ user_message: str })])), [inputIssue('session_id')]);
    });

    it('treats a missing output_json_schema as "{}"', () => {
      assert.deepEqual(issues(chatbot([node('in', 'InputNode')])), [inputIssue('user_message, session_id')]);
    });

    it('requires both input fields to be strings', () => {
      assert.deepEqual(issues(chatbot([chatInput({ user_message: { type: 'integer' }, session_id: str })])), [
        inputIssue('user_message (must be of type str)'),
      ]);
      assert.deepEqual(issues(chatbot([chatInput({ session_id: { type: 'number' } })])), [
        inputIssue('user_message, session_id (must be of type str)'),
      ]);
      assert.deepEqual(issues(chatbot([chatInput({ user_message: {}, session_id: str })])), [
        inputIssue('user_message (must be of type str)'),
      ]);
    });

    it('rejects invalid JSON in the input node schema', () => {
      assert.deepEqual(issues(chatbot([chatInput('{not json')])), [
        {
          code: 'custom',
          path: [],
          message: 'Invalid JSON schema in input node output_json_schema',
          kind: 'value_error',
        },
      ]);
    });

    it('requires assistant_message of type string on the output node', () => {
      const message = 'Chatbot output node must have the following mandatory fields: assistant_message';
      assert.deepEqual(issues(chatbot([goodInput(), chatOutput({ output: str })])), [
        { code: 'custom', path: [], message, kind: 'value_error' },
      ]);
      assert.deepEqual(
        issues(chatbot([chatOutput({ assistant_message: { type: 'object' } })])).map((i) => i.message),
        ['Chatbot output node must have the following mandatory fields: assistant_message (must be of type str)'],
      );
      assert.deepEqual(
        issues(chatbot([chatOutput('[oops')])).map((i) => i.message),
        ['Invalid JSON schema in output node output_json_schema'],
      );
    });

    it('skips the check of an absent node and reports both when both fail', () => {
      assert.equal(ok(chatbot([goodInput()])).nodes.length, 1);
      assert.equal(ok(chatbot([goodOutput()])).nodes.length, 1);
      assert.deepEqual(
        issues(chatbot([chatInput({}), chatOutput({})])).map((i) => i.message),
        [
          'Chatbot input node must have the following mandatory fields: user_message, session_id',
          'Chatbot output node must have the following mandatory fields: assistant_message',
        ],
      );
    });

    it('checks only the first top-level InputNode', () => {
      const child = chatInput({}, { id: 'child_in', parent_id: 'loop' });
      assert.equal(ok(chatbot([node('loop', 'ForLoopNode'), child, goodInput()])).nodes.length, 3);
    });

    it('applies to uppercase CHATBOT too', () => {
      assert.deepEqual(issues(chatbot([chatInput({})], 'CHATBOT')), [inputIssue('user_message, session_id')]);
    });

    it('does not apply to workflow or agent definitions', () => {
      for (const spurType of ['workflow', 'agent']) {
        const parsed = ok(chatbot([chatInput('{not json'), chatOutput({})], spurType));
        assert.equal(parsed.spur_type, spurType);
      }
      assert.equal(ok(def([chatInput({})])).spur_type, 'workflow');
    });
  });

  describe('subworkflow', () => {
    it('parses a nested definition recursively, filling its defaults', () => {
      const parsed = ok(
        def([
          node('loop', 'ForLoopNode', {
            subworkflow: {
              nodes: [{ id: 'inner', node_type: 'X', coordinates: { x: '5', y: '6' }, extra: true }],
              links: [],
              spur_type: 'AGENT',
              subworkflow_extra: 1,
            },
          }),
        ]),
      );
      const sub = parsed.nodes[0]!.subworkflow;
      assert.ok(sub);
      assert.deepEqual(Object.keys(sub), ['nodes', 'links', 'test_inputs', 'spur_type']);
      assert.equal(sub.spur_type, 'agent');
      assert.deepEqual(sub.test_inputs, []);
      const inner = sub.nodes[0]!;
      assert.deepEqual(
        {
          parent_id: inner.parent_id,
          config: inner.config,
          coordinates: inner.coordinates,
          subworkflow: inner.subworkflow,
        },
        { parent_id: null, config: {}, coordinates: { x: 5, y: 6 }, subworkflow: null },
      );
      assert.ok(!('extra' in inner));
    });

    it('parses two levels deep', () => {
      const parsed = ok(
        def([
          node('outer', 'ForLoopNode', {
            subworkflow: {
              nodes: [node('mid', 'ForLoopNode', { subworkflow: { nodes: [node('deep')], links: [] } })],
              links: [],
            },
          }),
        ]),
      );
      const deep = parsed.nodes[0]!.subworkflow!.nodes[0]!.subworkflow!;
      assert.equal(deep.nodes[0]!.id, 'deep');
      assert.equal(deep.spur_type, 'workflow');
    });

    it('rejects a malformed nested definition with the nested path', () => {
      assert.deepEqual(
        issues(def([node('loop', 'ForLoopNode', { subworkflow: { nodes: [{ id: 'inner' }], links: [] } })])).map(
          (i) => [i.code, i.path],
        ),
        [['invalid_type', ['nodes', 0, 'subworkflow', 'nodes', 0, 'node_type']]],
      );
      assert.deepEqual(
        issues(def([node('loop', 'ForLoopNode', { subworkflow: { nodes: [] } })])).map((i) => i.path),
        [['nodes', 0, 'subworkflow', 'links']],
      );
      assert.deepEqual(
        issues(def([node('loop', 'ForLoopNode', { subworkflow: { nodes: [], links: [], spur_type: 'nope' } })])).map(
          (i) => i.path,
        ),
        [['nodes', 0, 'subworkflow', 'spur_type']],
      );
    });
  });
});

describe('chatbot rules on malformed schema text', () => {
  it('reports missing fields when `properties` is not an object, instead of throwing', () => {
    for (const text of ['{"properties": 5}', '{"properties": "user_message"}', '{"properties": null}', '[]', 'null']) {
      const result = WorkflowDefinitionSchema.safeParse({
        spur_type: 'chatbot',
        nodes: [{ id: 'in', node_type: 'InputNode', config: { output_json_schema: text } }],
        links: [],
      });
      assert.equal(result.success, false, text);
      assert.match(result.error!.issues[0]!.message, /mandatory fields: user_message, session_id/, text);
    }
  });
});

describe('parent_id must name a node of the workflow', () => {
  it('rejects a child whose parent does not exist', () => {
    const result = WorkflowDefinitionSchema.safeParse({
      nodes: [
        { id: 'a', node_type: 'InputNode' },
        { id: 'c', node_type: 'OutputNode', parent_id: 'ghost' },
      ],
      links: [],
    });
    assert.equal(result.success, false);
    assert.deepEqual(result.error!.issues[0]!.path, ['nodes', 1, 'parent_id']);
    assert.match(result.error!.issues[0]!.message, /ghost/);
  });
});

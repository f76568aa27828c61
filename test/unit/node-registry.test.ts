import assert from 'node:assert/strict';
import { PURE_NODE_TYPES } from '../../src/engine/node-kinds';
import { LLM_MODEL_IDS } from '../../src/nodes/ai/model-ids.js';
import { DEFAULT_OUTPUT_JSON_SCHEMA } from '../../src/nodes/base-config.js';
import { buildSupportedNodeTypes } from '../../src/nodes/catalogue.js';
import { getNodeType, NODE_TYPE_NAMES, NODE_TYPES } from '../../src/nodes/registry.js';
import { NODE_CATEGORIES, type NodeTypeDefinition } from '../../src/nodes/types.js';

const withSuffix = (names: string[]) => names.map((n) => `${n}Node`);
const EXPECTED: Record<string, string[]> = {
  'Input/Output': withSuffix(['Input', 'Output']),
  AI: withSuffix(['SingleLLMCall', 'Agent', 'Retriever', 'BestOfN']),
  'Code Execution': withSuffix(['PythonFunc']),
  Logic: withSuffix([
    'Router',
    'Coalesce',
    'Merge',
    'StaticValue',
    'HumanIntervention',
    'Subworkflow',
    'Wait',
    'WaitForCallback',
  ]),
  Experimental: withSuffix(['ForLoop']),
  Integrations: withSuffix([
    'SlackNotify',
    'GoogleSheetsRead',
    'YouTubeTranscript',
    'GitHubListPullRequests',
    'GitHubListRepositories',
    'GitHubGetRepository',
    'GitHubSearchRepositories',
    'GitHubGetPullRequest',
    'GitHubGetPullRequestChanges',
    'GitHubCreateIssue',
    'JinaReader',
    'RedditCreatePost',
    'RedditGetTopPosts',
    'RedditGetUserInfo',
    'RedditGetSubredditInfo',
    'RedditGetSubredditStats',
    'RedditGetTrendingSubreddits',
    'FirecrawlCrawl',
    'FirecrawlScrape',
    'HTTPRequest',
  ]),
  Search: withSuffix(['ExaSearch']),
  Tools: withSuffix(['SendEmail', 'MCPTool']),
};

/** Config fields PySpur declares without a default: `{}` must be rejected on exactly these. */
const REQUIRED_FIELDS: Record<string, string[]> = {
  RetrieverNode: ['vector_index_id'],
  StaticValueNode: ['values'],
  ForLoopNode: ['subworkflow'],
  GitHubSearchRepositoriesNode: ['query'],
};

/** Spot checks of PySpur's defaults: node → config key → value. */
const SPOT_DEFAULTS: Record<string, Record<string, unknown>> = {
  HumanInterventionNode: { message: 'Human intervention required', block_only_dependent_nodes: true },
  CoalesceNode: { preferences: [] },
  OutputNode: { output_map: {} },
  SlackNotifyNode: { mode: 'bot', has_fixed_output: true, output_schema: { status: 'string' } },
  JinaReaderNode: { url_template: 'https://r.jina.ai/{url}', use_readerlm_v2: true },
  ExaSearchNode: { query_template: '{{input_1}}', max_results: 10, include_content: true, max_characters: 1000 },
  SendEmailNode: { provider: 'resend' },
};

const TAGS: Record<string, string> = {
  InputNode: 'IN #6F42C1',
  SingleLLMCallNode: 'SLCN #007BFF',
  StaticValueNode: 'CVN #20C997',
  ForLoopNode: 'FL #00BFFF',
  GitHubGetPullRequestChangesNode: 'GGPRCN #DC3545',
  SendEmailNode: 'SEN #FD7E14',
  MCPToolNode: 'MCP #6E56CF',
  HTTPRequestNode: 'HTTP #0EA5E9',
};

const LLM_INFO_DEFAULT = { model: 'openai/gpt-4o', max_tokens: 16384, temperature: 0.7, top_p: 0.9 };

function node(name: string): NodeTypeDefinition {
  const found = getNodeType(name);
  assert.ok(found, `${name} is registered`);
  return found;
}

const parseDefaults = (name: string) => node(name).config.parse({}) as Record<string, unknown>;

describe('node type registry', () => {
  it("has exactly the 39 catalogued types (PySpur's 34, MCPToolNode, HTTPRequestNode, SubworkflowNode, WaitNode and WaitForCallbackNode), unique, grouped in NODE_CATEGORIES order, found by name", () => {
    assert.equal(new Set(NODE_TYPE_NAMES).size, 39);
    assert.deepEqual([...NODE_TYPE_NAMES], Object.values(EXPECTED).flat());
    assert.deepEqual([...new Set(NODE_TYPES.map((n) => n.category))], [...NODE_CATEGORIES]);
    for (const category of NODE_CATEGORIES) {
      const members = NODE_TYPES.filter((n) => n.category === category).map((n) => n.name);
      assert.deepEqual(members, EXPECTED[category], category);
    }
    assert.equal(getNodeType('RouterNode')?.displayName, 'Router');
    assert.equal(getNodeType('MCTSNode'), undefined);
    assert.equal(getNodeType('routernode'), undefined);
  });

  it('runs only the cheap local nodes as pure, each of them a registered type, and carries the tags', () => {
    const expected = ['Coalesce', 'ForLoop', 'HumanIntervention', 'Input', 'Merge', 'Output', 'Router', 'StaticValue'];
    assert.deepEqual([...PURE_NODE_TYPES].sort(), withSuffix(expected));
    for (const name of PURE_NODE_TYPES) assert.ok(getNodeType(name), `${name} is a registered node type`);
    for (const [name, tag] of Object.entries(TAGS)) {
      const { acronym, color } = node(name).visualTag;
      assert.equal(`${acronym} ${color}`, tag, name);
    }
  });
});

describe('node config schemas', () => {
  it('parse {} to the defaults, failing only on the fields PySpur requires', () => {
    for (const n of NODE_TYPES) {
      const result = n.config.safeParse({});
      const required = REQUIRED_FIELDS[n.name];
      if (required) {
        assert.deepEqual(
          result.error?.issues.map((issue) => issue.path.join('.')),
          required,
          n.name,
        );
      } else {
        assert.ok(result.success, `${n.name}: ${result.error?.message}`);
        assert.equal(typeof result.data.output_json_schema, 'string', n.name);
      }
    }
    for (const [name, expected] of Object.entries(SPOT_DEFAULTS)) {
      const parsed = parseDefaults(name);
      for (const [key, value] of Object.entries(expected)) assert.deepEqual(parsed[key], value, `${name}.${key}`);
    }
  });

  it('default the base fields, and InputNode to one string field', () => {
    const base = { output_schema: { output: 'string' }, output_json_schema: DEFAULT_OUTPUT_JSON_SCHEMA };
    assert.deepEqual(parseDefaults('MergeNode'), { ...base, has_fixed_output: false });
    assert.equal(DEFAULT_OUTPUT_JSON_SCHEMA, '{"type": "object", "properties": {"output": {"type": "string"} } }');
    const input_1 = '{"type": "object", "properties": {"input_1": {"type": "string"} } }';
    const inputDefaults = { output_schema: { input_1: 'string' }, output_json_schema: input_1 };
    assert.deepEqual(parseDefaults('InputNode'), { ...inputDefaults, has_fixed_output: false, enforce_schema: false });
  });

  it('default SingleLLMCallNode like PySpur, in PySpur key order', () => {
    const parsed = parseDefaults('SingleLLMCallNode');
    assert.deepEqual(parsed.llm_info, LLM_INFO_DEFAULT);
    assert.deepEqual([parsed.system_message, parsed.user_message], ['You are a helpful assistant.', '']);
    assert.deepEqual([parsed.enable_thinking, parsed.enable_message_history], [false, false]);
    assert.deepEqual(Object.keys(node('SingleLLMCallNode').config.shape).slice(3), [
      'llm_info',
      'system_message',
      'user_message',
      'few_shot_examples',
      'url_variables',
      'enable_thinking',
      'thinking_budget_tokens',
      'enable_message_history',
      'message_history_variable',
    ]);
  });

  it('validate llm_info bounds and model ids', () => {
    const config = node('SingleLLMCallNode').config;
    const bad = [{ model: 'openai/gpt-5', max_tokens: 10 }, { model: 'openai/gpt-4o' }, { max_tokens: 65537 }];
    for (const llm_info of [...bad, { max_tokens: 10, temperature: 1.5 }]) {
      assert.ok(!config.safeParse({ llm_info }).success, JSON.stringify(llm_info));
    }
    const ok = config.parse({ llm_info: { max_tokens: 10 }, few_shot_examples: null });
    assert.deepEqual(ok.llm_info, { ...LLM_INFO_DEFAULT, max_tokens: 10 });
  });

  it('default RouterNode to one route with one empty condition', () => {
    const condition = { variable: '', operator: 'contains', value: '', logicalOperator: 'AND' };
    assert.deepEqual(parseDefaults('RouterNode').route_map, { route1: { conditions: [condition] } });
    assert.notEqual(parseDefaults('RouterNode').route_map, parseDefaults('RouterNode').route_map, 'fresh per parse');
    const given = { variable: 'a.b', value: 1 };
    const filled = node('RouterNode').config.parse({ route_map: { r: { conditions: [given] } } });
    assert.deepEqual(filled.route_map, { r: { conditions: [{ ...condition, ...given }] } });
  });

  it('keep extra config keys', () => {
    for (const name of ['InputNode', 'SingleLLMCallNode', 'RouterNode', 'SlackNotifyNode']) {
      assert.deepEqual(node(name).config.parse({ custom_key: { a: 1 } }).custom_key, { a: 1 }, name);
    }
  });
});

describe('model constraints', () => {
  const constraints = node('SingleLLMCallNode').modelConstraints ?? {};

  it('cover exactly the 48 model ids, follow the provider families and stay consistent', () => {
    assert.equal(LLM_MODEL_IDS.length, 48);
    assert.deepEqual(Object.keys(constraints), [...LLM_MODEL_IDS]);
    for (const id of ['openai/o1', 'openai/o3-mini', 'openai/o1-preview']) {
      assert.deepEqual([constraints[id]?.supports_temperature, constraints[id]?.supports_reasoning], [false, true], id);
    }
    assert.equal(constraints['openai/gpt-4o']?.supports_temperature, true);
    const claude = constraints['anthropic/claude-3-7-sonnet-latest'];
    assert.deepEqual([claude?.supports_thinking, claude?.thinking_budget_tokens], [true, 1024]);
    assert.ok(constraints['gemini/gemini-1.5-pro']?.supported_mime_types.includes('image/png'));
    assert.ok(constraints['gemini/gemini-2.0-flash']?.supported_mime_types.includes('application/pdf'));
    assert.equal(constraints['ollama/llama3:8b']?.max_tokens, 4096);
    for (const [id, c] of Object.entries(constraints)) {
      assert.equal(c.supports_thinking, c.thinking_budget_tokens !== null, id);
      if (c.reasoning_separator !== null) assert.ok(c.supports_reasoning, id);
      assert.ok(c.max_tokens >= 1 && c.max_tokens <= 65536, id);
      assert.ok(c.min_temperature <= c.max_temperature && c.max_temperature <= 1, id);
    }
  });
});

describe('supported node types catalogue', () => {
  const catalogue = buildSupportedNodeTypes();
  const entry = (category: string, name: string) => {
    const found = catalogue[category]?.find((e) => e.name === name);
    assert.ok(found, `${category}/${name}`);
    return found;
  };
  const props = (schema: Record<string, unknown>) => schema.properties as Record<string, Record<string, unknown>>;

  it('groups entries by category, is cached, orders keys like PySpur, sets logo/category only where given', () => {
    assert.deepEqual(Object.keys(catalogue), [...NODE_CATEGORIES]);
    for (const category of NODE_CATEGORIES) {
      assert.deepEqual(
        catalogue[category]?.map((e) => e.name),
        EXPECTED[category],
        category,
      );
    }
    assert.equal(buildSupportedNodeTypes(), catalogue);
    assert.ok(Object.isFrozen(catalogue['AI']?.[0]?.config));
    const base = ['name', 'input', 'output', 'config', 'visual_tag', 'has_fixed_output'];
    assert.deepEqual(Object.keys(entry('AI', 'SingleLLMCallNode')), [...base, 'model_constraints']);
    assert.deepEqual(Object.keys(entry('Integrations', 'SlackNotifyNode')), [...base, 'logo', 'category']);
    const plain = [entry('Logic', 'HumanInterventionNode'), entry('Tools', 'SendEmailNode'), entry('AI', 'AgentNode')];
    for (const e of plain) assert.deepEqual(Object.keys(e), base, e.name);
    const sheets = entry('Integrations', 'GoogleSheetsReadNode');
    assert.deepEqual([sheets.logo, sheets.category], ['/images/google.png', 'Google']);
    assert.equal(entry('Integrations', 'JinaReaderNode').category, 'Jina.AI');
    assert.equal(entry('Search', 'ExaSearchNode').logo, '/images/exa.png');
    for (const n of NODE_TYPES.filter((t) => ['Integrations', 'Search', 'Tools'].includes(t.category))) {
      assert.equal(entry(n.category, n.name).has_fixed_output, true, n.name);
    }
    assert.equal(entry('AI', 'RetrieverNode').has_fixed_output, false);
  });

  it('titles config schemas with the display name and shows defaults', () => {
    const llm = entry('AI', 'SingleLLMCallNode').config;
    assert.deepEqual([llm.title, llm.$schema], ['Single LLM Call', undefined]);
    assert.equal(props(llm).system_message?.default, 'You are a helpful assistant.');
    assert.deepEqual(props(llm).llm_info?.default, LLM_INFO_DEFAULT);
    assert.equal(props(llm).output_json_schema?.default, DEFAULT_OUTPUT_JSON_SCHEMA);
    assert.equal(entry('Experimental', 'ForLoopNode').config.title, 'ForLoopNode');
    assert.equal(entry('Integrations', 'FirecrawlCrawlNode').config.title, 'Firecrawl Crawl');
    const human = entry('Logic', 'HumanInterventionNode').config;
    assert.equal(props(human).message?.default, 'Human intervention required');
  });

  it('publishes {} for missing static models, real fields for fixed outputs, plain JSON', () => {
    for (const name of ['RouterNode', 'CoalesceNode', 'MergeNode']) assert.deepEqual(entry('Logic', name).output, {});
    assert.equal(entry('Logic', 'RouterNode').input.type, 'object');
    assert.deepEqual(entry('AI', 'SingleLLMCallNode').output.properties, {});
    const slack = entry('Integrations', 'SlackNotifyNode').output;
    assert.deepEqual([slack.properties, slack.$schema], [{ status: { type: 'string' } }, undefined]);
    const email = props(entry('Tools', 'SendEmailNode').output);
    assert.deepEqual(Object.keys(email), ['provider', 'message_id', 'status', 'raw_response']);
    assert.deepEqual(JSON.parse(JSON.stringify(catalogue)), catalogue);
  });
});

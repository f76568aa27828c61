import assert from 'node:assert/strict';
import { startEngine, waitForRun, type Engine } from '../support/engine';
import { startFakeLlmServer, type FakeLlmServer } from '../support/fake-llm-server';
import { type FakeMcpServer, startFakeMcpServer } from '../support/fake-mcp-server';
import { type FakeServices, startFakeServices } from '../support/fake-services';
import { type Cfg, l, n } from '../support/graphs';
import { SUCCESS_CASES } from '../support/integration-cases';
import { CREDENTIALS, fakeBases, setEnv } from '../support/integration-runs';

/**
 * Types that need data this walk does not build (a vector index): they must execute and fail for
 * that reason, naming what is missing; their own suites (test/e2e/rag*.test.ts) run them to success.
 */
const FAILS_WITHOUT_FIXTURE: Record<string, RegExp> = { RetrieverNode: /Vector index not found/ };

const LLM = { llm_info: { model: 'openai/gpt-4o', max_tokens: 100, temperature: 0.1 } };

/** How to run each type once: its config, and for a few, the graph around it. */
interface WalkCase {
  config?: Cfg;
  inputs?: Record<string, unknown>;
  /** The whole definition when `in → node` does not fit; the node under test is still `node`. */
  graph?: () => { nodes: unknown[]; links: unknown[] };
  /** The task that shows the type's outcome, `node` unless said. */
  taskOf?: string;
  /** The node's task status when it works (a human gate waits). */
  expect?: 'COMPLETED' | 'PAUSED';
}

/** The fake services the walk's integrations call (started before the walk). */
let services: FakeServices | undefined;

const httpWalkGraph = () => ({
  nodes: [
    n('in', 'InputNode', { output_schema: { x: 'string' } }),
    n('node', 'HTTPRequestNode', { url: `${services?.base('github')}/repos/o/{{ in.x }}` }),
  ],
  links: [l('in', 'node')],
});

/** The workflow the SubworkflowNode case runs as its child (saved before the walk). */
let childWorkflowId = '';

/** The MCP server the MCPToolNode case calls (started before the walk). */
let mcp: FakeMcpServer | undefined;

const WALK: Record<string, WalkCase> = {
  // Every run starts with the InputNode `in`.
  InputNode: { config: { output_map: { y: 'in.x' } }, taskOf: 'in' },
  OutputNode: { config: { output_map: { y: 'in.x' } } },
  SingleLLMCallNode: { config: LLM },
  AgentNode: { config: LLM },
  RetrieverNode: { config: { vector_index_id: 'VI1', query_template: '{{ in.x }}' } },
  BestOfNNode: { config: { ...LLM, samples: 2 } },
  PythonFuncNode: { config: { code: 'return {"output": "ran"}' } },
  RouterNode: {},
  CoalesceNode: {},
  MergeNode: {},
  StaticValueNode: { config: { values: { a: 1 } } },
  HumanInterventionNode: { expect: 'PAUSED' },
  ForLoopNode: {
    graph: () => ({
      nodes: [
        n('in', 'InputNode', { output_schema: { x: 'string' } }),
        n('node', 'ForLoopNode', { num_iterations: 1 }),
        n('li', 'InputNode', {}, { parent_id: 'node' }),
        n('lo', 'OutputNode', { output_map: { x: 'li.in.x' } }, { parent_id: 'node' }),
      ],
      links: [l('in', 'node'), l('li', 'lo')],
    }),
  },
  MCPToolNode: {
    graph: () => ({
      nodes: [
        n('in', 'InputNode', { output_schema: { key: 'string' } }),
        n('node', 'MCPToolNode', { server_url: `${mcp?.url}/mcp`, tool: 'lookup' }),
      ],
      links: [l('in', 'node')],
    }),
    inputs: { key: 'walk' },
  },
  // The fake services' GitHub answers a repository read (the node's own test: http-request-node.test.ts).
  HTTPRequestNode: { graph: () => httpWalkGraph() },
  SubworkflowNode: {
    graph: () => ({
      nodes: [
        n('in', 'InputNode', { output_schema: { x: 'string' } }),
        n('node', 'SubworkflowNode', { workflow_id: childWorkflowId, input_map: { x: 'in.x' } }),
      ],
      links: [l('in', 'node')],
    }),
  },
  WaitNode: { config: { seconds: 0 } },
  // Nobody calls back: the timeout continues (the callback's own test: waits.test.ts).
  WaitForCallbackNode: { config: { timeout_seconds: 1, on_timeout: 'continue' } },
  // Every integration, with the config its own test runs it with.
  ...Object.fromEntries(SUCCESS_CASES.map((c) => [c.type, { config: c.config, inputs: c.inputs }])),
};

describe('e2e: every type the catalogue lists executes', function () {
  this.timeout(240_000);
  let engine: Engine;
  let fake: FakeServices;
  let llm: FakeLlmServer;
  before(async () => {
    engine = await startEngine();
    fake = await startFakeServices();
    services = fake;
    llm = await startFakeLlmServer();
    mcp = await startFakeMcpServer();
    const child = {
      nodes: [
        n('in', 'InputNode', { output_schema: { x: 'string' } }),
        n('out', 'OutputNode', { output_map: { x: 'in.x' } }),
      ],
      links: [l('in', 'out')],
    };
    childWorkflowId = (await engine.http.post('/wf/', { name: 'walk-child', definition: child })).body.id;
    await setEnv(engine, {
      ...fakeBases(fake),
      ...CREDENTIALS,
      OPENAI_API_BASE: `${llm.url}/v1`,
      OPENAI_API_KEY: 'sk-walk',
    });
    // BestOfN's rating calls ask for a {rating} object; everything else gets the fake's echo.
    llm.respondWith((req) =>
      JSON.stringify(req.body.response_format ?? '').includes('rating')
        ? { content: JSON.stringify({ rating: 5 }) }
        : undefined,
    );
  });
  after(async () => {
    await engine?.close();
    await fake?.close();
    await llm?.close();
    await mcp?.close();
  });

  it('walks GET /node/supported_types/ and runs each type: none answers "not executable"', async () => {
    const catalogue = (await engine.http.get('/node/supported_types/')).body as Record<string, { name: string }[]>;
    const types = Object.values(catalogue)
      .flat()
      .map((entry) => entry.name);
    assert.equal(types.length, 39, "PySpur's 34, MCPToolNode and Spur's HTTP request, subworkflow and two waits");
    assert.deepEqual(
      types.filter((t) => !WALK[t]),
      [],
      'every listed type has a way to run in WALK',
    );
    const problems: string[] = [];
    for (const type of types) {
      const walk = WALK[type]!;
      const nodeType = type === 'InputNode' ? 'OutputNode' : type;
      const definition = walk.graph?.() ?? {
        nodes: [n('in', 'InputNode', { output_schema: { x: 'string' } }), n('node', nodeType, walk.config ?? {})],
        links: [l('in', 'node')],
      };
      const wf = (await engine.http.post('/wf/', { name: `walk-${type}`, definition })).body;
      assert.ok(wf.id, `${type}: ${JSON.stringify(wf)}`);
      const started = await engine.http.post(`/wf/${wf.id}/start_run/`, {
        initial_inputs: { in: walk.inputs ?? { x: 'hello' } },
      });
      assert.equal(started.status, 200, `${type}: ${JSON.stringify(started.body)}`);
      const run = await waitForRun(engine.http, started.body.id, undefined, 60_000);
      const task = run.tasks.find((t: { node_id: string }) => t.node_id === (walk.taskOf ?? 'node'));
      const error = String(task?.error ?? run.message ?? '');
      if (/not executable/i.test(error)) {
        problems.push(`${type}: ${error}`);
        continue;
      }
      const missing = FAILS_WITHOUT_FIXTURE[type];
      if (missing) {
        if (task?.status !== 'FAILED' || !missing.test(error))
          problems.push(`${type}: expected a failure naming ${missing}, got ${task?.status} ${error}`);
        continue;
      }
      if (task?.status !== (walk.expect ?? 'COMPLETED'))
        problems.push(`${type}: task ${task?.status ?? 'missing'} ${error}`);
    }
    assert.deepEqual(problems, []);
  });
});

// MCP tool-call overhead inside an agent step: the same tool (look a word up, answer a line of
// text) as an MCPToolNode calling a local MCP server (streamable HTTP, the official SDK on both
// sides) and as a PythonFuncNode, each the one tool of an AgentNode whose fake model calls it once
// and then answers. Runs alternate one of each on the same stack (api and worker processes); the
// runs differ only in the tool call (an activity either way: connect, list once per run, call; or
// start a sandbox and run the code), so the difference of the blocking runs' p50 is the overhead.
// Usage: npx tsx bench/mcp-tools.ts [runs of each] (bench/results/mcp-tools-latest.md)
import os from 'node:os';
import { startFakeLlmServer } from '../test/support/fake-llm-server';
import { startFakeMcpServer } from '../test/support/fake-mcp-server';
import { jsonClient, type JsonClient } from './lib/http';
import { saveResults } from './lib/report';
import { runWithStack } from './lib/stack';
import { percentile } from './lib/stats';

const MODEL = { model: 'openai/gpt-4o', max_tokens: 100, temperature: 0 };

function agentWith(tool: Record<string, unknown>) {
  return {
    nodes: [
      { id: 'in', title: 'in', node_type: 'InputNode', config: { output_schema: { word: 'string' } } },
      {
        id: 'agent',
        title: 'agent',
        node_type: 'AgentNode',
        config: { llm_info: MODEL, user_message: 'Look up {{in.word}}', max_iterations: 3 },
      },
      { ...tool, id: 'tool', title: 'lookup', parent_id: 'agent' },
      { id: 'out', title: 'out', node_type: 'OutputNode', config: { output_map: { answer: 'agent.output' } } },
    ],
    links: [
      { source_id: 'in', target_id: 'agent' },
      { source_id: 'agent', target_id: 'out' },
    ],
  };
}

async function timedRun(api: JsonClient, workflowId: string): Promise<number> {
  const started = Date.now();
  const res = await api.post(`/wf/${workflowId}/run/`, { initial_inputs: { in: { word: 'durable' } } });
  const runMs = Date.now() - started;
  if (res.status !== 200) throw new Error(`run answered ${res.status}: ${JSON.stringify(res.body)}`);
  const answer = (res.body as { out?: { answer?: unknown } }).out?.answer;
  if (answer !== 'looked up') throw new Error(`unexpected answer ${JSON.stringify(res.body)}`);
  return runMs;
}

const p50 = (xs: number[]) =>
  percentile(
    [...xs].sort((a, b) => a - b),
    50,
  );

runWithStack(
  'spur-bench-mcp-',
  async (stack) => {
    const runs = Number(process.argv[2] ?? 40);
    const warmup = 5;
    const api = jsonClient(stack.apiUrl);
    const llm = await startFakeLlmServer();
    const mcp = await startFakeMcpServer();
    try {
      for (const [name, value] of Object.entries({ OPENAI_API_BASE: `${llm.url}/v1`, OPENAI_API_KEY: 'sk-bench' }))
        await api.post('/env-mgmt/', { name, value });
      // First model call: look the word up; second (it has a tool result): answer.
      llm.respondWith((req) =>
        (req.body.messages as { role: string }[]).some((m) => m.role === 'tool')
          ? { content: JSON.stringify({ output: 'looked up' }) }
          : { toolCalls: [{ id: 'c1', name: 'lookup', arguments: { key: 'durable' } }] },
      );
      const create = async (name: string, tool: Record<string, unknown>) =>
        ((await api.post('/wf/', { name, definition: agentWith(tool) })).body as { id: string }).id;
      const viaMcp = await create('mcp tool', {
        node_type: 'MCPToolNode',
        config: { server_url: `${mcp.url}/mcp`, tool: 'lookup' },
      });
      const viaPython = await create('python tool', {
        node_type: 'PythonFuncNode',
        config: {
          code: 'return {"text": "definition of " + input_model.key}',
          output_schema: { text: 'string' },
        },
      });
      const samples = { mcp: [] as number[], python: [] as number[] };
      for (let i = 0; i < warmup + runs; i++) {
        const m = await timedRun(api, viaMcp);
        const p = await timedRun(api, viaPython);
        if (i >= warmup) {
          samples.mcp.push(m);
          samples.python.push(p);
        }
      }
      const row = (label: string, xs: number[]) =>
        `| ${label} | ${p50(xs)} | ${percentile(
          [...xs].sort((a, b) => a - b),
          95,
        )} |`;
      const overhead = p50(samples.mcp) - p50(samples.python);
      saveResults('mcp-tools-latest.md', [
        `# MCP tool calls inside an agent step (${runs} runs of each after ${warmup} warm-up, alternating)`,
        '',
        `${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? 'unknown'}), Node ${process.version}, api and worker as separate processes, fake model and MCP server on loopback.`,
        '',
        "| the agent's tool | blocking run p50 (ms) | p95 (ms) |",
        '|---|---|---|',
        row('MCPToolNode (streamable HTTP)', samples.mcp),
        row('PythonFuncNode (sandbox)', samples.python),
        '',
        `MCP minus Python at p50: ${overhead} ms per tool call (each run: two model calls, one tool call).`,
      ]);
    } finally {
      await Promise.all([llm.close(), mcp.close()]);
    }
  },
  { extraEnv: { SPUR_OUTBOUND_ALLOW_PRIVATE: 'true' } },
);

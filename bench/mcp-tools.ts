// MCP tool-call overhead inside an agent step: the same tool (look a word up, answer a line of
// text) as an MCPToolNode calling a local MCP server (streamable HTTP, the official SDK on both
// sides) and as a PythonFuncNode, each the one tool of an AgentNode whose fake model calls it once
// and then answers. Runs alternate one of each on the same stack (api and worker processes); the
// runs differ only in the tool call (an activity either way: connect, list once per run, call; or
// start a sandbox and run the code), so the difference of the blocking runs' p50 is the overhead.
// The tool step's own duration is reported too: its activity's run (start to completion) in the
// run's Temporal history, read after the timed runs. An agent's tool calls have no task of their
// own in the run record (only top-level nodes do), so the history is where their times are.
// Usage: npx tsx bench/mcp-tools.ts [runs of each] (bench/results/mcp-tools-latest.md)
import os from 'node:os';
import { startFakeLlmServer } from '../test/support/fake-llm-server';
import { startFakeMcpServer } from '../test/support/fake-mcp-server';
import { runWorkflowId } from '../src/contracts/workflow-names';
import { activityRunMs, withTemporalClient } from './lib/history';
import { jsonClient, type JsonClient } from './lib/http';
import { saveResults } from './lib/report';
import { runWithStack } from './lib/stack';
import { percentileOf } from './lib/stats';

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

/** One blocking run: how long it took, and its id (the workflow's newest run, asked after the clock stopped). */
async function timedRun(api: JsonClient, workflowId: string): Promise<{ ms: number; runId: string }> {
  const started = Date.now();
  const res = await api.post(`/wf/${workflowId}/run/`, { initial_inputs: { in: { word: 'durable' } } });
  const ms = Date.now() - started;
  if (res.status !== 200) throw new Error(`run answered ${res.status}: ${JSON.stringify(res.body)}`);
  const answer = (res.body as { out?: { answer?: unknown } }).out?.answer;
  if (answer !== 'looked up') throw new Error(`unexpected answer ${JSON.stringify(res.body)}`);
  const [newest] = (await api.get(`/wf/${workflowId}/runs/?page_size=1`)).body as Array<{ id: string }>;
  if (!newest) throw new Error(`no run listed for ${workflowId}`);
  return { ms, runId: newest.id };
}

/** The tool activity's run of each run, from its Temporal history: one tool call per run. */
async function toolStepMs(temporalAddress: string, prefix: string, runIds: string[], activityType: string) {
  return withTemporalClient(temporalAddress, async (client) => {
    const steps: number[] = [];
    for (const runId of runIds) {
      const history = await client.workflow.getHandle(runWorkflowId(runId, prefix)).fetchHistory();
      const [ms, ...more] = activityRunMs(history.events ?? [], activityType);
      if (ms === undefined || more.length > 0) throw new Error(`run ${runId}: not one ${activityType}`);
      steps.push(ms);
    }
    return steps;
  });
}

const f = (ms: number) => ms.toFixed(1);

const p50 = (xs: number[]) => percentileOf(xs, 50);

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
      const runIds = { mcp: [] as string[], python: [] as string[] };
      for (let i = 0; i < warmup + runs; i++) {
        const m = await timedRun(api, viaMcp);
        const p = await timedRun(api, viaPython);
        if (i >= warmup) {
          samples.mcp.push(m.ms);
          samples.python.push(p.ms);
          runIds.mcp.push(m.runId);
          runIds.python.push(p.runId);
        }
      }
      const temporalAddress = stack.env.SPUR_TEMPORAL_ADDRESS ?? '';
      const prefix = stack.env.SPUR_WORKFLOW_ID_PREFIX ?? '';
      const steps = {
        mcp: await toolStepMs(temporalAddress, prefix, runIds.mcp, 'executeMCPToolNode'),
        python: await toolStepMs(temporalAddress, prefix, runIds.python, 'executePythonFuncNode'),
      };
      const p95 = (xs: number[]) => percentileOf(xs, 95);
      const row = (label: string, runsMs: number[], stepMs: number[]) =>
        `| ${label} | ${p50(runsMs)} | ${p95(runsMs)} | ${f(p50(stepMs))} | ${f(p95(stepMs))} |`;
      const overhead = p50(samples.mcp) - p50(samples.python);
      const stepOverhead = p50(steps.mcp) - p50(steps.python);
      saveResults('mcp-tools-latest.md', [
        `# MCP tool calls inside an agent step (${runs} runs of each after ${warmup} warm-up, alternating)`,
        '',
        `${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? 'unknown'}), Node ${process.version}, api and worker as separate processes, fake model and MCP server on loopback.`,
        '',
        "| the agent's tool | blocking run p50 (ms) | p95 (ms) | tool step p50 (ms) | p95 (ms) |",
        '|---|---|---|---|---|',
        row('MCPToolNode (streamable HTTP)', samples.mcp, steps.mcp),
        row('PythonFuncNode (sandbox)', samples.python, steps.python),
        '',
        `MCP minus Python at p50: ${overhead} ms per run (each run: two model calls, one tool call); ${f(stepOverhead)} ms per tool step.`,
        '',
        "Tool step: the tool's activity (`executeMCPToolNode`, `executePythonFuncNode`) from its start on the worker to its completion, as the run's Temporal history records them.",
      ]);
    } finally {
      await Promise.all([llm.close(), mcp.close()]);
    }
  },
  { extraEnv: { SPUR_OUTBOUND_ALLOW_PRIVATE: 'true' } },
);

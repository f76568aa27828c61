// Records the workflow histories the replay test (test/e2e/replay.test.ts) checks every workflow
// change against: representative runs through the real api and worker, each history saved as
// test/fixtures/histories/<scenario>.json.
//
// Usage: npx tsx scripts/capture-history.ts [out-dir]
// It starts the test stack (scripts/test.ts) with this file as the only mocha spec. Regenerating
// replaces the baseline: the fixtures are exactly the scenarios below, in today's shapes.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { ReconcileInput } from '../src/contracts/reconcile-contract';
import type { RetentionPassInput } from '../src/contracts/retention-contract';
import { WorkflowType, evalWorkflowId, runWorkflowId } from '../src/contracts/workflow-names';
import { isFinal, waitForRun, type Engine } from '../test/support/engine';
import { runLeftUnstarted } from '../test/support/half-started-runs';
import { historyToProtoJson } from '../test/support/history-json';
import type { FakeLlmServer, RecordedRequest, ScriptedResponse } from '../test/support/fake-llm-server';
import { startLlmEngine } from '../test/support/llm-engine';
import { chatbotDefinition } from '../test/support/chatbot';
import { cond, input, l, n } from '../test/support/graphs';
import { type CallbackReceiver, startCallbackReceiver } from '../test/support/callback-receiver';
import { callbackWorkflowId } from '../src/contracts/callback-contract';
import { approvalDeliveryWorkflowId } from '../src/contracts/approval-contract';
import { limitWorkflowId } from '../src/contracts/limit-contract';
import { runActionWorkflowId } from '../src/contracts/run-action-contract';
import { REPO_ROOT } from './lib/tools';

const HISTORY_DIR = path.join(REPO_ROOT, 'test', 'fixtures', 'histories');
const CAPTURE_FLAG = 'SPUR_CAPTURE_HISTORIES';
const OUT_DIR_VAR = 'SPUR_CAPTURE_DIR';

interface Definition {
  nodes: unknown[];
  links: unknown[];
}

interface Scenario {
  name: string;
  definition: Definition;
  /** A chatbot run in a fresh test session (its InputNode is `input_node`). */
  session?: boolean;
  /** Fleet-wide limits set for the run (PUT /api/limits/); the first limit's workflow history is saved too. */
  limits?: Array<{ key: string; max_concurrent: number }>;
  /** The workflow's budget (PUT /api/wf/{id}/budget/). */
  budget?: Record<string, unknown>;
  /** The run's callback events (posted to a local receiver); the final event's delivery history is saved too. */
  callbackEvents?: string[];
  /**
   * The gate notifies a webhook (the local receiver) and reminds it after a second; the pause
   * action waits for both messages. The first message's delivery history is saved too.
   */
  approvalWebhook?: boolean;
  /** Full runs: the run status the scenario must end in. Partial runs: the request body. Batches: the dataset. */
  expect:
    | { status: 'COMPLETED' | 'FAILED' | 'CANCELED'; pauseAction?: Record<string, unknown> }
    | { partial: Record<string, unknown> }
    | { batch: { rows: number; miniBatchSize: number; approveRows?: boolean } }
    | { reconcile: { pageSize: number } }
    | { retention: { pageSize: number } }
    | { scheduled: true }
    | { code: string }
    | { eval: { rows: number } }
    | { runAction: { runs: number } };
}

const LLM = { model: 'openai/gpt-4o', max_tokens: 100, temperature: 0 };

/** The fake provider's script: one tool call for an agent, then answers; ratings for raters. */
function providerScript(req: RecordedRequest): ScriptedResponse {
  const messages = req.body.messages as { role: string; content: unknown }[];
  if (req.body.tools && !messages.some((m) => m.role === 'tool'))
    return { toolCalls: [{ id: 'call_1', name: 'echo_tool', arguments: {} }] };
  if (String(messages[0]?.content).startsWith('Rate')) return { content: '{"rating": 7}' };
  return { content: '{"output": "done", "response": "done"}' };
}

const py = (id: string, code: string) =>
  n(id, 'PythonFuncNode', { code, timeout_seconds: 20, heartbeat_timeout_seconds: 5, output_schema: { y: 'string' } });

const SCENARIOS: Scenario[] = [
  {
    // InputNode → PythonFuncNode (a regular activity) → OutputNode.
    name: 'linear',
    definition: {
      nodes: [input(), py('py', 'return {"y": input_model["in"]["x"] * 2}'), n('out', 'OutputNode')],
      links: [l('in', 'py'), l('py', 'out')],
    },
    expect: { status: 'COMPLETED' },
  },
  {
    // The same since a node's activity runs the pure nodes after it (SpurRunInput.callsCarry): the
    // PythonFuncNode's activity runs the OutputNode too.
    name: 'linear-carried',
    definition: {
      nodes: [input(), py('py', 'return {"y": input_model["in"]["x"] * 2}'), n('out', 'OutputNode')],
      links: [l('in', 'py'), l('py', 'out')],
    },
    expect: { status: 'COMPLETED' },
  },
  {
    // One route taken, one not: the untaken branch and what follows it are cancelled quietly.
    name: 'router-untaken-branch',
    definition: {
      nodes: [
        input(),
        n('R', 'RouterNode', {
          route_map: {
            yes: { conditions: [cond('in.x', 'equals', 'a')] },
            no: { conditions: [cond('in.x', 'equals', 'b')] },
          },
        }),
        n('Y', 'OutputNode'),
        n('N', 'OutputNode'),
        n('after_n', 'MergeNode'),
      ],
      links: [l('in', 'R'), l('R', 'Y', 'yes'), l('R', 'N', 'no'), l('N', 'after_n')],
    },
    expect: { status: 'COMPLETED' },
  },
  {
    // A failing activity (non-retryable) cancels its dependents with "Upstream failure"; the other branch finishes.
    name: 'failing-node',
    definition: {
      nodes: [
        input(),
        py('bad', 'raise ValueError("broken on purpose")'),
        n('after', 'MergeNode'),
        n('good', 'OutputNode'),
      ],
      links: [l('in', 'bad'), l('bad', 'after'), l('in', 'good')],
    },
    expect: { status: 'FAILED' },
  },
  {
    name: 'for-loop',
    definition: {
      nodes: [
        input(),
        n('loop', 'ForLoopNode', { num_iterations: 2 }),
        n('li', 'InputNode', {}, { parent_id: 'loop' }),
        n('lo', 'OutputNode', { output_map: { x: 'li.in.x' } }, { parent_id: 'loop' }),
        n('out', 'OutputNode'),
      ],
      links: [l('in', 'loop'), l('li', 'lo'), l('loop', 'out')],
    },
    expect: { status: 'COMPLETED' },
  },
  {
    // A human pause (an Update delivers the action), in parallel with a branch that finishes.
    name: 'pause-approve',
    definition: {
      nodes: [
        input(),
        n('gate', 'HumanInterventionNode', { message: 'check' }),
        n('after', 'OutputNode'),
        n('side', 'OutputNode'),
      ],
      links: [l('in', 'gate'), l('gate', 'after'), l('in', 'side')],
    },
    expect: { status: 'COMPLETED', pauseAction: { action: 'APPROVE', user_id: 'capture', inputs: { note: 'ok' } } },
  },
  {
    // A slow node after the pause: the save that shows it RUNNING carries the pause's resolution.
    name: 'pause-approve-slow-next',
    definition: {
      nodes: [
        input(),
        n('gate', 'HumanInterventionNode', { message: 'check' }),
        py('next', 'return {"y": input_model["gate"]["note"]}'),
      ],
      links: [l('in', 'gate'), l('gate', 'next')],
    },
    expect: { status: 'COMPLETED', pauseAction: { action: 'APPROVE', user_id: 'capture', inputs: { note: 'ok' } } },
  },
  {
    // A run with a callback: a delivery child (abandoned) at the pause and at the end.
    name: 'pause-callback',
    definition: {
      nodes: [input(), n('gate', 'HumanInterventionNode'), n('after', 'OutputNode')],
      links: [l('in', 'gate'), l('gate', 'after')],
    },
    callbackEvents: ['run.paused', 'run.completed'],
    expect: { status: 'COMPLETED', pauseAction: { action: 'APPROVE', user_id: 'capture', inputs: {} } },
  },
  {
    // Approval links: a delivery child (abandoned) per message, a reminder timer, a decision.
    name: 'pause-approvals',
    definition: {
      nodes: [input(), n('gate', 'HumanInterventionNode', { remind_after_seconds: 1 }), n('after', 'OutputNode')],
      links: [l('in', 'gate'), l('gate', 'after')],
    },
    approvalWebhook: true,
    expect: { status: 'COMPLETED', pauseAction: { action: 'APPROVE', user_id: 'capture', inputs: {} } },
  },
  {
    name: 'pause-decline',
    definition: {
      nodes: [input(), n('gate', 'HumanInterventionNode'), n('after', 'OutputNode')],
      links: [l('in', 'gate'), l('gate', 'after')],
    },
    expect: { status: 'CANCELED', pauseAction: { action: 'DECLINE', user_id: 'capture', inputs: {} } },
  },
  {
    // Workflow code read back (POST /api/code_convert/code_to_definition): one sandbox activity.
    name: 'code-parse',
    definition: { nodes: [input()], links: [] },
    expect: {
      code: 'from pyspur.workflow_builder import WorkflowBuilder\nb = WorkflowBuilder("captured")\nb.add_node(node_type="InputNode", config={}, id="in")\n',
    },
  },
  {
    // `a` is given, so only `b` and the target `c` run.
    name: 'partial-run',
    definition: {
      nodes: [input(), n('a', 'OutputNode', { output_map: { v: 'in.x' } }), n('b', 'MergeNode'), n('c', 'MergeNode')],
      links: [l('in', 'a'), l('a', 'b'), l('b', 'c')],
    },
    expect: { partial: { node_id: 'c', initial_inputs: { in: { x: 'a' } }, partial_outputs: { a: { v: 'given' } } } },
  },
  {
    // An agent's loop: model call → tool call (its own activity) → model call with the result.
    name: 'agent-tools',
    definition: {
      nodes: [
        input(),
        n('agent', 'AgentNode', { llm_info: LLM }),
        { ...py('tool', 'return {"y": "from tool"}'), title: 'echo_tool', parent_id: 'agent' },
        n('out', 'OutputNode'),
      ],
      links: [l('in', 'agent'), l('agent', 'out')],
    },
    expect: { status: 'COMPLETED' },
  },
  {
    // A chatbot run in a session: history read at start, the turn appended before the end.
    name: 'chatbot-session',
    definition: chatbotDefinition(),
    session: true,
    expect: { status: 'COMPLETED' },
  },
  {
    // Two samples, each followed by its rating call, in parallel.
    name: 'best-of-n',
    definition: {
      nodes: [input(), n('best', 'BestOfNNode', { llm_info: LLM, samples: 2 }), n('out', 'OutputNode')],
      links: [l('in', 'best'), l('best', 'out')],
    },
    expect: { status: 'COMPLETED' },
  },
  {
    // Two model calls under max_concurrent 1: the second waits for the first's slot (a grant
    // signal from the limit's workflow, whose history is saved as limited-limit.json).
    name: 'limited',
    definition: {
      nodes: [input(), n('a', 'SingleLLMCallNode', { llm_info: LLM }), n('b', 'SingleLLMCallNode', { llm_info: LLM })],
      links: [l('in', 'a'), l('in', 'b')],
    },
    limits: [{ key: 'openai', max_concurrent: 1 }],
    expect: { status: 'COMPLETED' },
  },
  {
    // A short call (a model call with a timeout ≤ 60 s, no heartbeats) runs as a local activity;
    // the Python node after it stays a regular activity (captured before short Python nodes:
    // SpurRunInput.localPython absent).
    name: 'short-calls',
    definition: {
      nodes: [
        input(),
        n('a', 'SingleLLMCallNode', { llm_info: LLM, timeout_seconds: 30 }),
        n('p', 'PythonFuncNode', { code: 'return {"y": input_model["a"]["output"]}', output_schema: { y: 'string' } }),
        n('out', 'OutputNode'),
      ],
      links: [l('in', 'a'), l('a', 'p'), l('p', 'out')],
    },
    expect: { status: 'COMPLETED' },
  },
  {
    // A PythonFuncNode with its default timeout (30 s) runs as a local activity too (runs started with
    // SpurRunInput.localPython), carrying the save that shows it RUNNING and the OutputNode after it.
    name: 'short-python',
    definition: {
      nodes: [
        input(),
        n('p', 'PythonFuncNode', { code: 'return {"y": input_model["in"]["x"] * 2}', output_schema: { y: 'string' } }),
        n('out', 'OutputNode'),
      ],
      links: [l('in', 'p'), l('p', 'out')],
    },
    expect: { status: 'COMPLETED' },
  },
  {
    // A short model call under a limit: its local activity finds the limit and sends nothing, the
    // call then waits for a slot and goes as a regular activity.
    name: 'short-limited',
    definition: {
      nodes: [input(), n('a', 'SingleLLMCallNode', { llm_info: LLM, timeout_seconds: 30 })],
      links: [l('in', 'a')],
    },
    limits: [{ key: 'openai', max_concurrent: 1 }],
    expect: { status: 'COMPLETED' },
  },
  {
    // A short call no other node runs beside carries the save that shows it RUNNING and the
    // OutputNode after it in its own local activity (runs started with SpurRunInput.callsCarry).
    name: 'short-carried',
    definition: {
      nodes: [input(), n('a', 'SingleLLMCallNode', { llm_info: LLM, timeout_seconds: 30 }), n('out', 'OutputNode')],
      links: [l('in', 'a'), l('a', 'out')],
    },
    expect: { status: 'COMPLETED' },
  },
  {
    // The same since a short call that leaves nothing of its run to do writes the run's final save
    // too (SpurRunInput.endsCarried): one local activity, no saveProgress of the run's own.
    name: 'short-ended',
    definition: {
      nodes: [input(), n('a', 'SingleLLMCallNode', { llm_info: LLM, timeout_seconds: 30 }), n('out', 'OutputNode')],
      links: [l('in', 'a'), l('a', 'out')],
    },
    expect: { status: 'COMPLETED' },
  },
  {
    // A pure region that is all its run has left writes the run's final save too (runs started with
    // SpurRunInput.endsCarried), an untaken route's node CANCELED inside it: one local activity.
    name: 'region-ended',
    definition: {
      nodes: [
        input(),
        n('S', 'StaticValueNode', { values: { greeting: 'hi' } }),
        n('R', 'RouterNode', {
          route_map: {
            yes: { conditions: [cond('S.greeting', 'equals', 'hi')] },
            no: { conditions: [cond('S.greeting', 'equals', 'bye')] },
          },
        }),
        n('out', 'OutputNode', { output_map: { said: 'R.S.greeting' } }),
        n('other', 'OutputNode'),
      ],
      links: [l('in', 'S'), l('S', 'R'), l('R', 'out', 'yes'), l('R', 'other', 'no')],
    },
    expect: { status: 'COMPLETED' },
  },
  {
    // The same under a limit: the local activity writes the save, finds the limit and sends
    // nothing; the call waits for a slot and goes as a regular activity.
    name: 'short-limited-carried',
    definition: {
      nodes: [input(), n('a', 'SingleLLMCallNode', { llm_info: LLM, timeout_seconds: 30 })],
      links: [l('in', 'a')],
    },
    limits: [{ key: 'openai', max_concurrent: 1 }],
    expect: { status: 'COMPLETED' },
  },
  {
    // A model call over the short-call bound (its default timeout) is a regular activity that carries
    // its RUNNING save, the OutputNode after it and the run's final save (SpurRunInput.regularCallsCarry),
    // and looks for a limit itself: one activity task, no local activity.
    name: 'regular-carried',
    definition: {
      nodes: [input(), n('a', 'SingleLLMCallNode', { llm_info: LLM }), n('out', 'OutputNode')],
      links: [l('in', 'a'), l('a', 'out')],
    },
    expect: { status: 'COMPLETED' },
  },
  {
    // The same under a limit: the activity writes the save, finds the limit and sends nothing (its
    // failure ends it); the call waits for a slot and goes as a regular activity again.
    name: 'regular-limited-carried',
    definition: {
      nodes: [input(), n('a', 'SingleLLMCallNode', { llm_info: LLM })],
      links: [l('in', 'a')],
    },
    limits: [{ key: 'openai', max_concurrent: 1 }],
    expect: { status: 'COMPLETED' },
  },
  {
    // A budget no call fits: the run pauses at the model call, APPROVE lets it go once.
    name: 'budget-pause',
    definition: {
      nodes: [input(), n('ask', 'SingleLLMCallNode', { llm_info: LLM }), n('out', 'OutputNode')],
      links: [l('in', 'ask'), l('ask', 'out')],
    },
    budget: { per_run_usd: 0.000001, on_exceed: 'pause' },
    expect: { status: 'COMPLETED', pauseAction: { action: 'APPROVE', user_id: 'capture', inputs: {} } },
  },
  {
    // A batch whose rows run inline, in one chunk activity.
    name: 'batch-inline',
    definition: { nodes: [input(), n('out', 'OutputNode', { output_map: { x: 'in.x' } })], links: [l('in', 'out')] },
    expect: { batch: { rows: 5, miniBatchSize: 2 } },
  },
  {
    // A batch whose rows pause: child workflows, two at a time, each approved.
    name: 'batch-child',
    definition: {
      nodes: [input(), n('gate', 'HumanInterventionNode'), n('out', 'OutputNode')],
      links: [l('in', 'gate'), l('gate', 'out')],
    },
    expect: { batch: { rows: 3, miniBatchSize: 2, approveRows: true } },
  },
  {
    // One reconciler pass (what its schedule starts) over two pages of open runs, one of them never started.
    name: 'reconcile',
    definition: { nodes: [input(), n('out', 'OutputNode', { output_map: { x: 'in.x' } })], links: [l('in', 'out')] },
    expect: { reconcile: { pageSize: 1 } },
  },
  {
    // One retention pass (what its daily schedule starts) deleting two expired runs, a page each.
    name: 'retention',
    definition: { nodes: [input(), n('out', 'OutputNode', { output_map: { x: 'in.x' } })], links: [l('in', 'out')] },
    expect: { retention: { pageSize: 1 } },
  },
  {
    // An eval run: its batch as a child workflow (rows as child runs), scored beside it by one activity.
    name: 'eval-run',
    definition: {
      nodes: [input(), n('out', 'OutputNode', { output_schema: { x: 'string' }, output_map: { x: 'in.x' } })],
      links: [l('in', 'out')],
    },
    expect: { eval: { rows: 3 } },
  },
  {
    // A bulk cancel of paused runs: its pages (one activity each) with a wait between them, then its end.
    name: 'run-action',
    definition: {
      nodes: [input(), n('gate', 'HumanInterventionNode'), n('out', 'OutputNode')],
      links: [l('in', 'gate'), l('gate', 'out')],
    },
    expect: { runAction: { runs: 25 } },
  },
  {
    // One fire of a schedule (backfilled, so it comes at once): the run recorded, then run as a child.
    name: 'scheduled',
    definition: { nodes: [input(), n('out', 'OutputNode', { output_map: { x: 'in.x' } })], links: [l('in', 'out')] },
    expect: { scheduled: true },
  },
];

/** Leaves runs stored but never started (an api killed mid-request), then runs one reconciler pass. */
async function runReconcileScenario(engine: Engine, workflowId: string, pageSize: number): Promise<string> {
  const stranded = [
    await runLeftUnstarted(engine, workflowId, { in: { x: 'a' } }),
    await runLeftUnstarted(engine, workflowId, { in: { x: 'a' } }),
  ];
  const input: ReconcileInput = { graceMs: 0, pageSize, maxPages: 5 };
  const handle = await engine.api.temporal.workflow.start(WorkflowType.spurReconcile, {
    workflowId: `${engine.api.config.temporal.workflowIdPrefix}spur-reconcile`,
    taskQueue: engine.api.config.temporal.taskQueue,
    args: [input],
  });
  await handle.result();
  for (const runId of stranded) assert.equal((await waitForRun(engine.http, runId, isFinal)).status, 'COMPLETED');
  return handle.workflowId;
}

/** Two finished runs past their workflow's retention, then one retention pass in pages of `pageSize` runs. */
async function runRetentionScenario(engine: Engine, workflowId: string, pageSize: number): Promise<string> {
  for (let i = 0; i < 2; i++) {
    const res = await engine.http.post(`/wf/${workflowId}/run/`, { initial_inputs: { in: { x: 'a' } } });
    assert.equal(res.status, 200, res.text);
  }
  const set = await engine.http.put(`/wf/${workflowId}/retention/`, { days: 1e-9 });
  assert.equal(set.status, 200, set.text);
  const input: RetentionPassInput = { pageSize };
  const handle = await engine.api.temporal.workflow.start(WorkflowType.spurRetention, {
    workflowId: `${engine.api.config.temporal.workflowIdPrefix}spur-retention`,
    taskQueue: engine.api.config.temporal.taskQueue,
    args: [input],
  });
  assert.deepEqual(await handle.result(), { deleted_runs: 2, kept_active: 0 });
  return handle.workflowId;
}

/** An eval run of the workflow over `rows` rows, each answer right: resolves to the eval's workflow id. */
async function runEvalScenario(engine: Engine, workflowId: string, rows: number): Promise<string> {
  const fd = new FormData();
  const lines = Array.from({ length: rows }, (_, i) => JSON.stringify({ x: `v${i}`, answer: `v${i}` }));
  fd.append('file', new Blob([lines.join('\n')]), 'rows.jsonl');
  const ds = await engine.http.post(`/ds/?name=capture-eval-${workflowId}`, fd);
  assert.equal(ds.status, 200, ds.text);
  const suite = await engine.http.post('/evals/suites/', {
    name: `capture-${workflowId}`,
    dataset_id: ds.body.id,
    answer_column: 'answer',
    scorer: { type: 'exact' },
  });
  assert.equal(suite.status, 200, suite.text);
  const body = { workflow_id: workflowId, eval_name: suite.body.name, output_variable: 'out-x', num_samples: rows };
  const launched = await engine.http.post('/evals/launch/', { ...body, concurrency: 2 });
  assert.equal(launched.status, 200, launched.text);
  for (let tries = 0; tries < 600; tries++) {
    const run = (await engine.http.get(`/evals/runs/${launched.body.run_id}`)).body;
    if (run.status === 'COMPLETED') {
      assert.equal(run.results.accuracy, 1, JSON.stringify(run));
      return evalWorkflowId(launched.body.run_id, engine.api.config.temporal.workflowIdPrefix);
    }
    assert.ok(['PENDING', 'RUNNING'].includes(run.status), JSON.stringify(run));
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`eval run ${launched.body.run_id} did not complete`);
}

/** `runs` paused runs cancelled by one bulk action (two pages): resolves to the action's workflow id. */
async function runRunActionScenario(engine: Engine, workflowId: string, runs: number): Promise<string> {
  const ids: string[] = [];
  for (let i = 0; i < runs; i++) {
    const started = await engine.http.post(`/wf/${workflowId}/start_run/`, { initial_inputs: { in: { x: `r${i}` } } });
    assert.equal(started.status, 200, started.text);
    ids.push(started.body.id);
  }
  for (const id of ids) await waitForRun(engine.http, id, (r) => r.status === 'PAUSED');
  const made = await engine.http.post('/runs/actions/', {
    filter: { workflow_id: workflowId, status: ['PAUSED'] },
    action: 'cancel',
  });
  assert.equal(made.status, 200, made.text);
  assert.equal(made.body.matched, runs);
  for (const id of ids) assert.equal((await waitForRun(engine.http, id, isFinal)).status, 'CANCELED');
  return runActionWorkflowId(made.body.id, engine.api.config.temporal.workflowIdPrefix);
}

/** An hourly schedule backfilled over one past hour: exactly one fire. Resolves to the fire's workflow id. */
async function runScheduledScenario(engine: Engine, workflowId: string): Promise<string> {
  const sc = await engine.http.post(`/wf/${workflowId}/schedules/`, {
    interval_seconds: 3600,
    initial_inputs: { in: { x: 'a' } },
  });
  assert.equal(sc.status, 200, sc.text);
  const hour = Math.floor(Date.now() / 3_600_000) * 3_600_000;
  const range = {
    start_time: new Date(hour - 5_400_000).toISOString(),
    end_time: new Date(hour - 1_800_000).toISOString(),
  };
  assert.equal((await engine.http.post(`/schedules/${sc.body.id}/backfill/`, range)).status, 202);
  const query = `WorkflowType = '${WorkflowType.spurScheduledRun}' AND TaskQueue = '${engine.api.config.temporal.taskQueue}'`;
  for (let tries = 0; tries < 100; tries++) {
    for await (const execution of engine.api.temporal.workflow.list({ query })) {
      await engine.api.temporal.workflow.getHandle(execution.workflowId).result();
      assert.equal((await engine.http.delete(`/schedules/${sc.body.id}/`)).status, 204);
      return execution.workflowId;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no ${WorkflowType.spurScheduledRun} workflow found on ${engine.api.config.temporal.taskQueue}`);
}

/** A batch over a `rows`-row dataset; rows that pause are approved as they come. Resolves to the parent's workflow id. */
async function runBatchScenario(
  engine: Engine,
  workflowId: string,
  batch: { rows: number; miniBatchSize: number; approveRows?: boolean },
): Promise<string> {
  const fd = new FormData();
  fd.append('file', new Blob([['x', ...Array.from({ length: batch.rows }, (_, i) => `v${i}`)].join('\n')]), 'rows.csv');
  const ds = await engine.http.post(`/ds/?name=capture-${workflowId}`, fd);
  assert.equal(ds.status, 200, ds.text);
  const parent = await engine.http.post(`/wf/${workflowId}/start_batch_run/`, {
    dataset_id: ds.body.id,
    mini_batch_size: batch.miniBatchSize,
  });
  assert.equal(parent.status, 200, parent.text);
  const run = await waitForRun(
    engine.http,
    parent.body.id,
    (r) => {
      if (batch.approveRows) void approvePausedRows(engine, parent.body.id);
      return isFinal(r);
    },
    60_000,
  );
  assert.equal(run.status, 'COMPLETED', JSON.stringify(run));
  return runWorkflowId(parent.body.id, engine.api.config.temporal.workflowIdPrefix);
}

const approving = new Set<string>();
async function approvePausedRows(engine: Engine, parentRunId: string): Promise<void> {
  const paused = (await engine.http.get('/wf/paused_workflows/?page_size=100')).body as Array<{
    run: { id: string; parent_run_id: string | null };
  }>;
  for (const p of paused.filter((x) => x.run.parent_run_id === parentRunId && !approving.has(x.run.id))) {
    approving.add(p.run.id);
    await engine.http.post(`/wf/process_pause_action/${p.run.id}/`, {
      action: 'APPROVE',
      user_id: 'capture',
      inputs: {},
    });
  }
}

/** Runs one scenario through the api; resolves to the Temporal workflow id of the run it started. */
async function runScenario(engine: Engine, scenario: Scenario, receiver?: CallbackReceiver): Promise<string> {
  if ('code' in scenario.expect) {
    const res = await engine.http.post('/code_convert/code_to_definition', { code: scenario.expect.code });
    assert.equal(res.status, 200, res.text);
    return findOnlyWorkflow(engine, WorkflowType.spurCodeParse);
  }
  const definition =
    scenario.approvalWebhook && receiver
      ? withApprovalWebhook(scenario.definition, `${receiver.url}/${scenario.name}`)
      : scenario.definition;
  const wf = await engine.http.post('/wf/', { name: `capture-${scenario.name}`, definition });
  assert.equal(wf.status, 200, wf.text);
  const { expect } = scenario;
  if (scenario.budget) {
    const res = await engine.http.put(`/wf/${wf.body.id}/budget/`, scenario.budget);
    assert.equal(res.status, 200, res.text);
  }
  if (scenario.limits) {
    const res = await engine.http.put('/limits/', scenario.limits);
    assert.equal(res.status, 200, res.text);
  }
  if ('batch' in expect) return runBatchScenario(engine, wf.body.id, expect.batch);
  if ('reconcile' in expect) return runReconcileScenario(engine, wf.body.id, expect.reconcile.pageSize);
  if ('retention' in expect) return runRetentionScenario(engine, wf.body.id, expect.retention.pageSize);
  if ('scheduled' in expect) return runScheduledScenario(engine, wf.body.id);
  if ('eval' in expect) return runEvalScenario(engine, wf.body.id, expect.eval.rows);
  if ('runAction' in expect) return runRunActionScenario(engine, wf.body.id, expect.runAction.runs);
  if ('partial' in expect) {
    const res = await engine.http.post(`/wf/${wf.body.id}/run_partial/`, expect.partial);
    assert.equal(res.status, 200, res.text);
    return findOnlyWorkflow(engine, WorkflowType.spurPartialRun);
  }
  const inputs = scenario.session
    ? {
        input_node: {
          user_message: 'hi',
          session_id: (await engine.http.post(`/session/test/?workflow_id=${wf.body.id}`)).body.id,
          message_history: [],
        },
      }
    : { in: { x: 'a' } };
  const callback =
    scenario.callbackEvents && receiver
      ? {
          callback: {
            url: `${receiver.url}/${scenario.name}`,
            secret: 'capture-secret',
            events: scenario.callbackEvents,
          },
        }
      : {};
  const started = await engine.http.post(`/wf/${wf.body.id}/start_run/`, { initial_inputs: inputs, ...callback });
  assert.equal(started.status, 200, started.text);
  if (expect.pauseAction) {
    await waitForRun(engine.http, started.body.id, (r) => r.status === 'PAUSED');
    if (scenario.approvalWebhook && receiver) await receiver.waitFor(`/${scenario.name}`, 2);
    const acted = await engine.http.post(`/wf/process_pause_action/${started.body.id}/`, expect.pauseAction);
    assert.equal(acted.status, 200, acted.text);
  }
  const run = await waitForRun(engine.http, started.body.id, isFinal);
  assert.equal(run.status, expect.status, `${scenario.name}: ${JSON.stringify(run)}`);
  return runWorkflowId(started.body.id, engine.api.config.temporal.workflowIdPrefix);
}

/** The definition with its HumanInterventionNodes notifying `url` by webhook. */
function withApprovalWebhook(definition: Definition, url: string): Definition {
  const nodes = (definition.nodes as { node_type: string; config: Record<string, unknown> }[]).map((node) =>
    node.node_type === 'HumanInterventionNode'
      ? { ...node, config: { ...node.config, notify: [{ channel: 'webhook', to: url }] } }
      : node,
  );
  return { ...definition, nodes };
}

/** The api does not expose a partial run's or a code parse's workflow id; this engine's task queue holds just one of each. */
async function findOnlyWorkflow(engine: Engine, type: string): Promise<string> {
  const query = `WorkflowType = '${type}' AND TaskQueue = '${engine.api.config.temporal.taskQueue}'`;
  for (let tries = 0; tries < 100; tries++) {
    for await (const execution of engine.api.temporal.workflow.list({ query })) return execution.workflowId;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no ${type} workflow found on ${engine.api.config.temporal.taskQueue}`);
}

async function saveHistory(engine: Engine, workflowId: string, file: string, opts = { open: false }): Promise<void> {
  const handle = engine.api.temporal.workflow.getHandle(workflowId);
  if (!opts.open) await handle.result().catch(() => undefined); // closed, whatever the outcome
  const history = await handle.fetchHistory();
  writeFileSync(file, `${JSON.stringify(historyToProtoJson(history), null, 2)}\n`);
}

function defineCaptureSuite(outDir: string): void {
  describe('capture workflow histories', function () {
    this.timeout(120_000);
    let engine: Engine;
    let fake: FakeLlmServer;
    let receiver: CallbackReceiver;
    before(async () => {
      mkdirSync(outDir, { recursive: true });
      receiver = await startCallbackReceiver();
      ({ engine, fake } = await startLlmEngine({
        SPUR_OUTBOUND_ALLOW_PRIVATE: 'true',
        SPUR_APPROVAL_WEBHOOK_SECRET: 'capture-approval-secret',
        // A bulk action's pages come slower than it acts: its history holds the wait between two pages.
        SPUR_RUN_ACTION_RATE: '5',
      }));
      fake.respondWith(providerScript);
    });
    after(async () => {
      await engine?.close();
      await fake?.close();
      await receiver?.close();
    });

    // SPUR_CAPTURE_ONLY=name,name re-records just those scenarios.
    const only = process.env.SPUR_CAPTURE_ONLY?.split(',').filter(Boolean);
    for (const scenario of SCENARIOS.filter((s) => !only || only.includes(s.name))) {
      it(scenario.name, async () => {
        const workflowId = await runScenario(engine, scenario, receiver);
        await saveHistory(engine, workflowId, path.join(outDir, `${scenario.name}.json`));
        const [limit] = scenario.limits ?? [];
        if (limit) {
          // The limit's workflow runs on until it has been idle a minute: its history so far.
          const limitId = limitWorkflowId(limit.key, engine.api.config.temporal.workflowIdPrefix);
          await new Promise((r) => setTimeout(r, 1000));
          await saveHistory(engine, limitId, path.join(outDir, `${scenario.name}-limit.json`), { open: true });
          await engine.http.put('/limits/', []);
        }
        if (scenario.approvalWebhook) {
          const [hit] = await receiver.waitFor(`/${scenario.name}`, 1);
          const body = hit?.body as { run_id: string; pause_id: string };
          await saveHistory(
            engine,
            approvalDeliveryWorkflowId(engine.api.config.temporal.workflowIdPrefix, `${body.pause_id}:notify:1`),
            path.join(outDir, `${scenario.name}-delivery.json`),
          );
        }
        if (scenario.callbackEvents) {
          const [hit] = await receiver.waitFor(`/${scenario.name}`, scenario.callbackEvents.length);
          const runId = String(hit?.body.run.id);
          const last = scenario.callbackEvents.at(-1);
          await saveHistory(
            engine,
            callbackWorkflowId(engine.api.config.temporal.workflowIdPrefix, `${runId}:${last}:1`),
            path.join(outDir, `${scenario.name}-delivery.json`),
          );
        }
      });
    }
  });
}

/** Started by hand: run this file as the only spec of the test harness, which brings up the stack. */
function main(): Promise<number> {
  const outDir = path.resolve(process.argv[2] ?? HISTORY_DIR);
  const args = [
    require.resolve('tsx/cli'),
    path.join(REPO_ROOT, 'scripts', 'test.ts'),
    '--no-config',
    '--require',
    'tsx/cjs',
    '--extension',
    'ts',
    '--exit',
    __filename,
  ];
  const env = { ...process.env, SPUR_TEST_SKIP_STATIC: '1', [CAPTURE_FLAG]: '1', [OUT_DIR_VAR]: outDir };
  const child = spawn(process.execPath, args, { cwd: REPO_ROOT, stdio: 'inherit', env });
  return new Promise((resolve) => child.on('exit', (code) => resolve(code ?? 1)));
}

if (process.env[CAPTURE_FLAG] === '1' && typeof describe === 'function') {
  defineCaptureSuite(process.env[OUT_DIR_VAR] ?? HISTORY_DIR);
} else if (require.main === module) {
  void main().then((code) => {
    if (code === 0) console.log(`histories written to ${path.resolve(process.argv[2] ?? HISTORY_DIR)}`);
    process.exit(code);
  });
}

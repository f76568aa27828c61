import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Models } from '../../src/db/models';
import type { PythonSandbox } from '../../src/nodes/code-execution/python-sandbox';
import { NodeExecutionError, TransientNodeError } from '../../src/nodes/errors';
import { NODE_TYPES, getNodeType } from '../../src/nodes/registry';
import type { NodeExecutionContext, NodeTypeDefinition } from '../../src/nodes/types';
import { FailureType } from '../shared/failures';
import { type ExecuteNodeActivity, type ExecuteNodeInput, type ExecuteNodeResult, nodeActivityName } from '../../src/engine/run-contract';

export interface NodeActivityDeps {
  models: Models;
  /** Clear-text provider setting by variable name (env management), for LLM and integration nodes. */
  secret(name: string): Promise<string | undefined>;
  /** Where PythonFuncNode code runs. */
  pythonSandbox?: PythonSandbox;
}

const HEARTBEAT_AT_MOST_EVERY_MS = 5000;

/** One activity type per node type (`executeRouterNode`, `executePythonFuncNode`, …), one body. */
export function createNodeActivities(deps: NodeActivityDeps): Record<string, ExecuteNodeActivity> {
  const run = (input: ExecuteNodeInput) => executeNode(deps, input);
  return Object.fromEntries(NODE_TYPES.map((t) => [nodeActivityName(t.name), run]));
}

/** Runs one node; the workflow records the outcome (the run's projection has a single writer). */
export async function executeNode(deps: NodeActivityDeps, { runId, node, input }: ExecuteNodeInput): Promise<ExecuteNodeResult> {
  const type = getNodeType(node.node_type);
  if (!type?.execute) {
    throw ApplicationFailure.nonRetryable(`Node type ${node.node_type} is not executable yet`, FailureType.NotExecutable);
  }
  const startTime = new Date().toISOString();
  const output = await runExecute(type, node.config, input, nodeContext(deps, runId, node.id, node.title));
  return { output, startTime, endTime: new Date().toISOString() };
}

async function runExecute(type: NodeTypeDefinition, rawConfig: unknown, input: Record<string, unknown>, ctx: NodeExecutionContext) {
  const config = type.config.safeParse(rawConfig ?? {});
  if (!config.success) {
    const problems = config.error.issues.map((i) => `${i.path.join('.') || 'config'}: ${i.message}`).join('; ');
    throw ApplicationFailure.nonRetryable(`Invalid ${type.name} config: ${problems}`, FailureType.NodeFailed);
  }
  // Three heartbeats per heartbeat timeout, so a live worker is never mistaken for a dead one.
  const timeoutMs = Context.current().info.heartbeatTimeoutMs ?? 0;
  const heartbeat = setInterval(() => ctx.heartbeat(), timeoutMs > 0 ? Math.min(HEARTBEAT_AT_MOST_EVERY_MS, timeoutMs / 3) : HEARTBEAT_AT_MOST_EVERY_MS);
  try {
    return await (type.execute as NonNullable<NodeTypeDefinition['execute']>)(config.data, input, ctx);
  } catch (err) {
    if (err instanceof NodeExecutionError) throw ApplicationFailure.nonRetryable(err.message, FailureType.NodeFailed);
    if (err instanceof TransientNodeError) {
      // A zero delay ends the retries on the server (seen with Retry-After: 0): use the policy's then.
      const delay = err.retryAfterMs && err.retryAfterMs > 0 ? err.retryAfterMs : undefined;
      throw ApplicationFailure.create({ message: err.message, type: 'TransientNodeError', nextRetryDelay: delay });
    }
    throw err; // unknown errors are retried by the activity's retry policy
  } finally {
    clearInterval(heartbeat);
  }
}

function nodeContext(deps: NodeActivityDeps, runId: string, nodeId: string, nodeTitle: string): NodeExecutionContext {
  const activity = Context.current();
  return {
    runId,
    nodeId,
    nodeTitle,
    signal: activity.cancellationSignal,
    secret: (name) => deps.secret(name),
    heartbeat: (details) => activity.heartbeat(details),
    pythonSandbox: deps.pythonSandbox,
  };
}

import type { ProviderFailureKind } from './failure-usage';
import { failureUsage } from './failure-usage';
import { modelOf } from './model-calls';
import type { PureRegion, RegionOutcome } from './pure-region';
import {
  type AgentStepInput,
  type AgentStepResult,
  type ExecuteNodeResult,
  type GraphNode,
  type ModelFailure,
  type TokenUsage,
  addUsage,
} from './run-contract';

/** How many models `llm_info.fallback_models` may name (each is tried with all its retries). */
export const MAX_FALLBACK_MODELS = 3;

/** What trying a node's models needs from the place that runs them. */
export interface ModelTries<T> {
  /** One model's call, with every retry it has (a failure here is final for that model). */
  call(node: GraphNode): Promise<T>;
  /** How the provider failed the call, if it did: only such a failure moves on to the next model. */
  providerFailure(err: unknown): ProviderFailureKind | undefined;
  isCancellation(err: unknown): boolean;
  failureMessage(err: unknown): string;
}

/** The answer, the model that gave it and those that failed before it (oldest first). */
export interface ModelAnswer<T> {
  result: T;
  model: string | undefined;
  failures: ModelFailure[];
  /** What the failed models' calls were paid for before they failed. */
  failedUsage?: TokenUsage;
}

/**
 * The models a node tries, in order: `llm_info.model`, then `llm_info.fallback_models` (each once,
 * the node's own model not again). Empty for a node that calls no model.
 */
export function modelChain(node: Pick<GraphNode, 'config'>): string[] {
  const first = modelOf(node);
  if (!first) return [];
  const listed = (node.config.llm_info as { fallback_models?: unknown }).fallback_models;
  const rest = Array.isArray(listed) ? listed.filter((m): m is string => typeof m === 'string' && m.length > 0) : [];
  return [...new Set([first, ...rest])].slice(0, MAX_FALLBACK_MODELS + 1);
}

/** The node as it calls `model` instead of its own (the same messages, settings and retries). */
export function withModel(node: GraphNode, model: string): GraphNode {
  const info = node.config.llm_info as Record<string, unknown>;
  return { ...node, config: { ...node.config, llm_info: { ...info, model } } };
}

/**
 * Calls the node's model and, when the provider failed it for good (5xx, 429, a timeout or no
 * connection, after its retries), the next of its fallback models with the same request. A
 * refusal of the request itself (a 4xx, a bad config) or a cancel ends the tries: another model
 * would be asked the same wrong thing. When every model fails, the error names each one's failure.
 */
export async function tryModels<T>(node: GraphNode, tries: ModelTries<T>): Promise<ModelAnswer<T>> {
  const chain = modelChain(node);
  if (chain.length <= 1) return { result: await tries.call(node), model: chain[0], failures: [] };
  const failures: ModelFailure[] = [];
  let failedUsage: TokenUsage | undefined;
  for (const [index, model] of chain.entries()) {
    try {
      const result = await tries.call(index === 0 ? node : withModel(node, model));
      return { result, model, failures, ...(failedUsage ? { failedUsage } : {}) };
    } catch (err) {
      const last = index === chain.length - 1;
      if (tries.isCancellation(err) || !tries.providerFailure(err)) {
        if (failures.length === 0) throw err;
        throw new ModelsFailedError([...failures, { model, error: tries.failureMessage(err) }], failedUsage);
      }
      failures.push({ model, error: tries.failureMessage(err) });
      failedUsage = addUsage(failedUsage, failureUsage(err));
      if (last) throw new ModelsFailedError(failures, failedUsage);
    }
  }
  throw new Error('unreachable: the chain has a model');
}

/**
 * Every model of a node failed: its message names each model and why, and it carries what the
 * calls were paid for (as a failed attempt's details do), so the task counts their usage.
 */
export class ModelsFailedError extends Error {
  readonly details: [{ usage?: TokenUsage }];
  constructor(
    readonly failures: ModelFailure[],
    usage: TokenUsage | undefined,
  ) {
    super(`Every model failed: ${failures.map((f) => `${f.model}: ${f.error.split('\n')[0]}`).join('; ')}`);
    this.name = 'ModelsFailedError';
    this.details = [usage ? { usage } : {}];
  }
}

type NodeCallResult = Pick<ExecuteNodeResult, 'output' | 'startTime' | 'usage' | 'dryRun'> & {
  endTime?: string;
  followUp?: RegionOutcome[];
};

/** The calls of a place that runs nodes (a walker's executor), as fallbacks wrap them. */
export interface ModelCalls {
  execute(node: GraphNode, input: Record<string, unknown>, followUp?: PureRegion): Promise<NodeCallResult>;
  agentStep?(input: AgentStepInput): Promise<AgentStepResult>;
  providerFailure?(err: unknown): ProviderFailureKind | undefined;
  isCancellation(err: unknown): boolean;
}

/** A node call's result, with the model that answered and those that failed before it, when it had fallbacks. */
export type FallbackResult = NodeCallResult & { model?: string; modelFailures?: ModelFailure[] };

/**
 * The calls with each node's fallback models. A node without fallbacks gets the call's promise as
 * it is (no extra step), so a run's workflow issues its commands in the order its history has.
 */
export function withFallbackModels(calls: ModelCalls, failureMessage: (err: unknown) => string) {
  const tries = <T>(call: (node: GraphNode) => Promise<T>): ModelTries<T> => ({
    call,
    providerFailure: (err) => calls.providerFailure?.(err),
    isCancellation: (err) => calls.isCancellation(err),
    failureMessage,
  });
  const spent = <T extends { usage?: TokenUsage }>(answer: ModelAnswer<T>) => {
    const usage = addUsage(answer.failedUsage, answer.result.usage);
    return { ...answer.result, ...(usage ? { usage } : {}) };
  };
  return {
    execute(node: GraphNode, input: Record<string, unknown>, followUp?: PureRegion): Promise<FallbackResult> {
      if (modelChain(node).length <= 1) return calls.execute(node, input, followUp);
      return tryModels(
        node,
        tries((n) => calls.execute(n, input, followUp)),
      ).then((answer) => ({
        ...spent(answer),
        ...(answer.model ? { model: answer.model } : {}),
        ...(answer.failures.length > 0 ? { modelFailures: answer.failures } : {}),
      }));
    },
    agentStep(input: AgentStepInput): Promise<AgentStepResult> {
      const step = calls.agentStep?.bind(calls);
      if (!step) throw new Error('agent steps are not executable here');
      if (modelChain(input.agent).length <= 1) return step(input);
      return tryModels(
        input.agent,
        tries((agent) => step({ ...input, agent })),
      ).then(spent);
    },
  };
}

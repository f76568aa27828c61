import { ENGINE_NODE_TYPES } from './node-kinds';
import { modelOf } from './model-calls';
import type { GraphNode } from './run-contract';

/** How a batch's LLM calls go out: one request each (`online`), or one provider batch per node. */
export const LLM_MODES = ['online', 'provider_batch'] as const;
export type LlmMode = (typeof LLM_MODES)[number];

/** Providers with a batch API Spur speaks: OpenAI's Batch API, Anthropic's Message Batches. */
export const BATCH_PROVIDERS = ['openai', 'anthropic'] as const;
export type BatchProvider = (typeof BATCH_PROVIDERS)[number];

/** One request of a provider batch: the body the node would have sent online, and its row's id. */
export interface BatchLine {
  custom_id: string;
  body: Record<string, unknown>;
}

/** What the provider answered one request: the reply body the online endpoint would have sent, or why not. */
export type BatchAnswer = { ok: true; body: unknown } | { ok: false; error: string };

/** A batch row's custom id (the provider's key for its answer). */
export const rowCustomId = (row: number): string => `row-${row}`;

/** The node type whose model call goes out in a provider batch; other nodes run as usual. */
export const BATCHED_NODE_TYPE = 'SingleLLMCallNode';

/**
 * Node types a provider-batch run refuses: each needs its row to go on while the batch waits (an
 * agent's or a tool's loop of calls, a loop), or a workflow of its own (a person, a timer, a
 * callback, a child run). Online mode still runs them.
 */
const REFUSED: Readonly<Record<string, string>> = {
  [ENGINE_NODE_TYPES.agent]: 'an agent',
  MCPToolNode: 'a tool',
  [ENGINE_NODE_TYPES.humanIntervention]: 'a human pause',
  [ENGINE_NODE_TYPES.forLoop]: 'a loop',
  [ENGINE_NODE_TYPES.subworkflow]: 'a sub-workflow',
  [ENGINE_NODE_TYPES.wait]: 'a wait',
  [ENGINE_NODE_TYPES.waitForCallback]: 'a wait for a callback',
};

/** The provider of a `provider/model` id when it has a batch API Spur speaks. */
export function batchProviderOf(modelId: string): BatchProvider | undefined {
  const provider = modelId.slice(0, Math.max(0, modelId.indexOf('/')));
  return (BATCH_PROVIDERS as readonly string[]).includes(provider) ? (provider as BatchProvider) : undefined;
}

/** Why a graph cannot run in provider-batch mode, naming the node; null when it can. */
export function providerBatchRefusal(nodes: readonly GraphNode[]): string | null {
  for (const node of nodes) {
    const what = REFUSED[node.node_type];
    const name = `'${node.title || node.id}' (${node.id})`;
    if (what)
      return `Node ${name} is ${what} (${node.node_type}): provider batch mode cannot run it; use llm_mode "online"`;
    if (node.node_type !== BATCHED_NODE_TYPE) continue;
    const model = modelOf(node) ?? '';
    if (!batchProviderOf(model))
      return `Node ${name} calls ${model || 'no model'}: provider batch mode supports ${BATCH_PROVIDERS.join(' and ')} models`;
  }
  return null;
}

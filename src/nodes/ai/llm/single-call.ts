import { DEFAULT_OUTPUT_JSON_SCHEMA } from '../../base-config.js';
import type { ModelConstraint, NodeExecutionContext, NodeInput, NodeOutput } from '../../types.js';
import { MODEL_CONSTRAINTS, uncappedOutputTokens } from '../model-constraints.js';
import { adapterFor } from './adapters.js';
import { outputSchemaFor, replyToOutput } from './json-output.js';
import { type MessageConfig, buildMessages, jsonInstruction } from './messages.js';
import { DEFAULT_LLM_TIMEOUT_MS } from './provider-settings.js';
import type { ChatCompletionRequest, ChatCompletionResult, ChatMessage, LlmAdapter } from './types.js';

/** The SingleLLMCallNode config fields used here (the parsed zod config is assignable to it). */
export interface LlmCallConfig extends MessageConfig {
  llm_info: { model: string; max_tokens: number; temperature: number; top_p: number };
  output_json_schema: string;
  enable_thinking?: boolean;
  thinking_budget_tokens?: number | null;
  /** Optional extra key, also read by the activity options (its start-to-close timeout). */
  timeout_seconds?: unknown;
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}

/** Sampling settings within the model's published limits; omitted where the API rejects them. */
function sampling(
  info: LlmCallConfig['llm_info'],
  limits: ModelConstraint | undefined,
): Partial<ChatCompletionRequest> {
  const out: Partial<ChatCompletionRequest> = {};
  // The default config asks for 16384 tokens, more than several models allow: clamp, don't fail.
  if (limits?.supports_max_tokens !== false)
    out.maxTokens = limits ? Math.min(info.max_tokens, limits.max_tokens) : info.max_tokens;
  if (limits?.supports_temperature !== false) {
    out.temperature = limits
      ? clamp(info.temperature, limits.min_temperature, limits.max_temperature)
      : info.temperature;
    out.topP = info.top_p;
  }
  return out;
}

/** PySpur's rule: thinking only for models that support it, budget from the config, the model, or 1024. */
function thinking(config: LlmCallConfig, limits: ModelConstraint | undefined): Partial<ChatCompletionRequest> {
  if (!config.enable_thinking || !limits?.supports_thinking) return {};
  return { thinkingBudgetTokens: config.thinking_budget_tokens ?? limits.thinking_budget_tokens ?? 1024 };
}

function requestTimeoutMs(config: LlmCallConfig): number {
  const seconds = Number(config.timeout_seconds);
  return Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : DEFAULT_LLM_TIMEOUT_MS;
}

/** Reasoning models may write their thoughts inline (`<think>…</think>`) ahead of the answer. */
export function stripReasoning(text: string, separator: string | null | undefined): string {
  return separator ? text.replace(new RegExp(separator, 'gs'), '').trim() : text;
}

/** A model call made ready from a node's config: the adapter and the request settings. */
export interface PreparedModel {
  modelId: string;
  limits: ModelConstraint | undefined;
  adapter: LlmAdapter;
  settings: Omit<ChatCompletionRequest, 'messages'>;
  /**
   * The most the request may answer, in tokens: what it asks for, or, for a model that takes no
   * cap (OpenAI's o-series set their own), the model's maximum output. Never 0: a budget holds a
   * call's worst case by it.
   */
  maxOutputTokens: number;
}

export async function prepareModel(config: LlmCallConfig, ctx: NodeExecutionContext): Promise<PreparedModel> {
  const modelId = config.llm_info.model;
  const limits: ModelConstraint | undefined = (MODEL_CONSTRAINTS as Record<string, ModelConstraint>)[modelId];
  const { adapter, model } = await adapterFor(modelId, {
    secret: (name) => ctx.secret(name),
    timeoutMs: requestTimeoutMs(config),
    fetch: ctx.fetch,
  });
  const settings = { model, ...sampling(config.llm_info, limits), ...thinking(config, limits), signal: ctx.signal };
  return {
    modelId,
    limits,
    adapter,
    settings,
    maxOutputTokens:
      settings.maxTokens ?? uncappedOutputTokens(modelId) ?? limits?.max_tokens ?? config.llm_info.max_tokens,
  };
}

/** One provider request (Temporal owns retries), paid for through the node's context. */
export async function callModel(
  prepared: PreparedModel,
  messages: ChatMessage[],
  extra: Partial<ChatCompletionRequest>,
  ctx: NodeExecutionContext,
): Promise<ChatCompletionResult> {
  // No heartbeat of its own: a regular activity's first one goes to Temporal at once (a write of the
  // activity's state per call), while the node's periodic beat (execute-node.activity.ts) already
  // keeps a long request alive and brings a cancel to it.
  const send = async () => {
    const onText = ctx.delta ? (text: string) => ctx.delta?.(text) : undefined;
    const traced = ctx.traceModelCall?.(prepared.modelId);
    const reply = await prepared.adapter.chatCompletion({
      ...prepared.settings,
      ...extra,
      messages,
      ...(onText ? { onText } : {}),
    });
    traced?.end(reply.usage);
    return reply;
  };
  if (!ctx.payForModelCall) return send();
  const prompt = messages
    .map((m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content)))
    .join('\n');
  return ctx.payForModelCall({ model: prepared.modelId, prompt, maxOutputTokens: prepared.maxOutputTokens }, send);
}

/** The JSON-mode setting for a schema: models without a JSON mode get only the prompt's instruction. */
export function jsonMode(prepared: PreparedModel, schema: Record<string, unknown>): Partial<ChatCompletionRequest> {
  return prepared.limits?.supports_JSON_output === false ? {} : { jsonSchema: schema };
}

/**
 * One chat completion in JSON mode: render the prompts, call the provider once (Temporal owns
 * retries), parse the reply as JSON and validate it against `output_json_schema`.
 */
export async function executeSingleLlmCall(
  config: LlmCallConfig,
  input: NodeInput,
  ctx: NodeExecutionContext,
): Promise<NodeOutput> {
  // Compile the schema and render the templates first: their errors need no network round trip.
  const output = outputSchemaFor(config.output_json_schema.trim() || DEFAULT_OUTPUT_JSON_SCHEMA);
  const messages = await buildMessages(config, input, jsonInstruction(output.schema), ctx);
  const prepared = await prepareModel(config, ctx);
  const reply = await callModel(prepared, messages, jsonMode(prepared, output.schema), ctx);
  return replyToOutput(stripReasoning(reply.text, prepared.limits?.reasoning_separator), output);
}

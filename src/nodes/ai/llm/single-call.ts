import { DEFAULT_OUTPUT_JSON_SCHEMA } from '../../base-config.js';
import type { ModelConstraint, NodeExecutionContext, NodeInput, NodeOutput } from '../../types.js';
import { MODEL_CONSTRAINTS } from '../model-constraints.js';
import { adapterFor } from './adapters.js';
import { outputSchemaFor, replyToOutput } from './json-output.js';
import { type MessageConfig, buildMessages, jsonInstruction } from './messages.js';
import { DEFAULT_LLM_TIMEOUT_MS } from './provider-settings.js';
import type { ChatCompletionRequest } from './types.js';

/** The SingleLLMCallNode config fields used here (the parsed zod config is assignable to it). */
export interface LlmCallConfig extends MessageConfig {
  llm_info: { model: string; max_tokens: number; temperature: number; top_p: number };
  output_json_schema: string;
  /** Optional extra key, also read by the activity options (its start-to-close timeout). */
  timeout_seconds?: unknown;
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}

/** Sampling settings within the model's published limits; omitted where the API rejects them. */
function sampling(info: LlmCallConfig['llm_info'], limits: ModelConstraint | undefined): Partial<ChatCompletionRequest> {
  const out: Partial<ChatCompletionRequest> = {};
  // The default config asks for 16384 tokens, more than several models allow: clamp, don't fail.
  if (limits?.supports_max_tokens !== false) out.maxTokens = limits ? Math.min(info.max_tokens, limits.max_tokens) : info.max_tokens;
  if (limits?.supports_temperature !== false) {
    out.temperature = limits ? clamp(info.temperature, limits.min_temperature, limits.max_temperature) : info.temperature;
    out.topP = info.top_p;
  }
  return out;
}

function requestTimeoutMs(config: LlmCallConfig): number {
  const seconds = Number(config.timeout_seconds);
  return Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : DEFAULT_LLM_TIMEOUT_MS;
}

/** Reasoning models may write their thoughts inline (`<think>…</think>`) ahead of the answer. */
function stripReasoning(text: string, separator: string | null | undefined): string {
  return separator ? text.replace(new RegExp(separator, 'gs'), '').trim() : text;
}

/**
 * One chat completion in JSON mode: render the prompts, call the provider once (Temporal owns
 * retries), parse the reply as JSON and validate it against `output_json_schema`.
 */
export async function executeSingleLlmCall(config: LlmCallConfig, input: NodeInput, ctx: NodeExecutionContext): Promise<NodeOutput> {
  const modelId = config.llm_info.model;
  const limits: ModelConstraint | undefined = (MODEL_CONSTRAINTS as Record<string, ModelConstraint>)[modelId];
  // Compile the schema and render the templates first: their errors need no network round trip.
  const output = outputSchemaFor(config.output_json_schema.trim() || DEFAULT_OUTPUT_JSON_SCHEMA);
  const messages = buildMessages(config, input, jsonInstruction(output.schema));
  const { adapter, model } = await adapterFor(modelId, { secret: (name) => ctx.secret(name), timeoutMs: requestTimeoutMs(config) });
  ctx.heartbeat({ phase: 'llm_request', model: modelId });
  const reply = await adapter.chatCompletion({
    model,
    messages,
    ...sampling(config.llm_info, limits),
    // Models without a JSON mode still get the instruction in the system prompt.
    ...(limits?.supports_JSON_output === false ? {} : { jsonSchema: output.schema }),
    signal: ctx.signal,
  });
  ctx.heartbeat({ phase: 'llm_response', model: modelId });
  return replyToOutput(stripReasoning(reply.text, limits?.reasoning_separator), output);
}

import type OpenAI from 'openai';
import type { ChatCompletionCreateParamsNonStreaming } from 'openai/resources/chat/completions';
import { NodeExecutionError } from '../../errors.js';
import { toNodeError } from './provider-errors.js';
import type { AdapterOptions } from './provider-settings.js';
import type { ChatCompletionRequest, LlmAdapter } from './types.js';

/** How an OpenAI-compatible provider differs: its name in errors and what it accepts. */
export interface OpenAiChatFlavour {
  provider: string;
  /** `json_schema` where the provider supports structured outputs, else plain JSON mode. */
  jsonMode: 'json_schema' | 'json_object';
  /** OpenAI itself deprecated `max_tokens`; compatible providers only know that one. */
  maxTokensParam: 'max_tokens' | 'max_completion_tokens';
}

/**
 * SDK options shared by every OpenAI-compatible client. Everything that the SDK would otherwise
 * read from process.env is given explicitly: settings come only from env management.
 */
export function openAiClientOptions(apiKey: string, baseURL: string, options: AdapterOptions) {
  return { apiKey, baseURL, adminAPIKey: null, organization: null, project: null, maxRetries: 0, timeout: options.timeoutMs };
}

function requestBody(request: ChatCompletionRequest, flavour: OpenAiChatFlavour): ChatCompletionCreateParamsNonStreaming {
  const body: ChatCompletionCreateParamsNonStreaming = { model: request.model, messages: request.messages };
  if (request.maxTokens !== undefined) body[flavour.maxTokensParam] = request.maxTokens;
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (request.topP !== undefined) body.top_p = request.topP;
  if (request.jsonSchema) {
    body.response_format =
      flavour.jsonMode === 'json_schema'
        ? // Not strict: strict mode only takes a subset of JSON Schema, and the reply is validated anyway.
          { type: 'json_schema', json_schema: { name: 'output', schema: request.jsonSchema, strict: false } }
        : { type: 'json_object' };
  }
  return body;
}

/** One chat completion through an OpenAI SDK client (OpenAI, Azure and the compatible APIs). */
export function openAiChatAdapter(client: OpenAI, flavour: OpenAiChatFlavour): LlmAdapter {
  return {
    async chatCompletion(request) {
      try {
        const completion = await client.chat.completions.create(requestBody(request, flavour), { signal: request.signal });
        const message = completion.choices[0]?.message;
        if (!message) throw new NodeExecutionError(`${flavour.provider} returned no choices`);
        if (message.refusal) throw new NodeExecutionError(`${flavour.provider} refused the request: ${message.refusal}`);
        return { text: message.content ?? '' };
      } catch (err) {
        throw toNodeError(err, flavour.provider, request.signal);
      }
    },
  };
}

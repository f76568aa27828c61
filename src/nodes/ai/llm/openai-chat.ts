import type OpenAI from 'openai';
import type {
  ChatCompletionContentPart,
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionMessageParam,
} from 'openai/resources/chat/completions';
import { NodeExecutionError } from '../../errors.js';
import { streamChatCompletion } from './openai-stream.js';
import { usageOf } from './openai-usage.js';
import { toNodeError } from './provider-errors.js';
import type { AdapterOptions } from './provider-settings.js';
import type { ChatCompletionRequest, ChatMessage, ContentPart, LlmAdapter } from './types.js';

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
  return {
    apiKey,
    baseURL,
    adminAPIKey: null,
    organization: null,
    project: null,
    maxRetries: 0,
    timeout: options.timeoutMs,
    fetch: options.fetch,
  };
}

/** Images go as `image_url` data URIs; other files (PDF) as `file` parts with their bytes. */
function contentPart(part: ContentPart): ChatCompletionContentPart {
  if (part.type === 'text') return { type: 'text', text: part.text };
  const dataUri = `data:${part.mimeType};base64,${part.base64}`;
  if (part.mimeType.startsWith('image/')) return { type: 'image_url', image_url: { url: dataUri } };
  return { type: 'file', file: { file_data: dataUri, filename: part.name ?? 'file' } };
}

function toOpenAiMessage(message: ChatMessage): ChatCompletionMessageParam {
  switch (message.role) {
    case 'user':
      return {
        role: 'user',
        content: typeof message.content === 'string' ? message.content : message.content.map(contentPart),
      };
    case 'assistant':
      return message.toolCalls && message.toolCalls.length > 0
        ? {
            role: 'assistant',
            content: message.content || null,
            tool_calls: message.toolCalls.map((c) => ({
              id: c.id,
              type: 'function',
              function: { name: c.name, arguments: c.arguments },
            })),
          }
        : { role: 'assistant', content: message.content };
    case 'tool':
      return { role: 'tool', tool_call_id: message.toolCallId, content: message.content };
    default:
      return { role: 'system', content: message.content };
  }
}

function requestBody(
  request: ChatCompletionRequest,
  flavour: OpenAiChatFlavour,
): ChatCompletionCreateParamsNonStreaming {
  const body: ChatCompletionCreateParamsNonStreaming = {
    model: request.model,
    messages: request.messages.map(toOpenAiMessage),
  };
  if (request.tools && request.tools.length > 0) {
    body.tools = request.tools.map((t) => ({
      type: 'function',
      function: { name: t.name, description: t.description, parameters: t.parameters },
    }));
    body.tool_choice = 'auto';
  }
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

/**
 * One chat completion through an OpenAI SDK client (OpenAI, Azure and the compatible APIs).
 * Streamed when the caller takes text as it comes and offers no tools (tool calls stay one reply).
 */
export function openAiChatAdapter(client: OpenAI, flavour: OpenAiChatFlavour): LlmAdapter {
  return {
    async chatCompletion(request) {
      try {
        if (request.onText && !(request.tools && request.tools.length > 0)) {
          return await streamChatCompletion(
            client,
            requestBody(request, flavour),
            flavour.provider,
            request.onText,
            request.signal,
          );
        }
        const completion = await client.chat.completions.create(requestBody(request, flavour), {
          signal: request.signal,
        });
        const message = completion.choices[0]?.message;
        if (!message) throw new NodeExecutionError(`${flavour.provider} returned no choices`);
        if (message.refusal)
          throw new NodeExecutionError(`${flavour.provider} refused the request: ${message.refusal}`);
        const toolCalls = (message.tool_calls ?? []).flatMap((c) =>
          c.type === 'function' ? [{ id: c.id, name: c.function.name, arguments: c.function.arguments }] : [],
        );
        return {
          text: message.content ?? '',
          ...(toolCalls.length > 0 ? { toolCalls } : {}),
          ...usageOf(completion.usage),
        };
      } catch (err) {
        throw toNodeError(err, flavour.provider, request.signal);
      }
    },
  };
}

import Anthropic from '@anthropic-ai/sdk';
import type { MessageCreateParamsNonStreaming } from '@anthropic-ai/sdk/resources/messages';
import { toNodeError } from './provider-errors.js';
import { type AdapterOptions, baseUrlSetting, requiredSetting } from './provider-settings.js';
import type { ChatCompletionRequest, LlmAdapter } from './types.js';

/** The Messages API requires a limit; used only when the caller has none. */
const FALLBACK_MAX_TOKENS = 4096;

function requestBody(request: ChatCompletionRequest): MessageCreateParamsNonStreaming {
  // The Messages API takes the system prompt as a parameter, not as a message. It has no JSON
  // mode: the caller's system prompt already asks for JSON matching the schema.
  const system = request.messages.filter((m) => m.role === 'system').map((m) => m.content).join('\n\n');
  const messages = request.messages.flatMap((m) => (m.role === 'system' ? [] : [{ role: m.role, content: m.content }]));
  const body: MessageCreateParamsNonStreaming = {
    model: request.model,
    max_tokens: request.maxTokens ?? FALLBACK_MAX_TOKENS,
    messages,
  };
  if (system) body.system = system;
  // Anthropic asks for temperature OR top_p, and newer models reject both together.
  if (request.temperature !== undefined) body.temperature = request.temperature;
  else if (request.topP !== undefined) body.top_p = request.topP;
  return body;
}

/** `anthropic/*`: the Messages API through the official SDK; ANTHROPIC_API_BASE overrides the host. */
export async function anthropicAdapter(options: AdapterOptions): Promise<LlmAdapter> {
  const apiKey = await requiredSetting(options.secret, 'ANTHROPIC_API_KEY');
  const baseURL = await baseUrlSetting(options.secret, 'ANTHROPIC_API_BASE', 'https://api.anthropic.com');
  // An explicit key and base URL keep the SDK from reading ANTHROPIC_* variables or profiles.
  const client = new Anthropic({ apiKey, baseURL, maxRetries: 0, timeout: options.timeoutMs });
  return {
    async chatCompletion(request) {
      try {
        const message = await client.messages.create(requestBody(request), { signal: request.signal });
        const text = message.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('');
        return { text };
      } catch (err) {
        throw toNodeError(err, 'Anthropic', request.signal);
      }
    },
  };
}

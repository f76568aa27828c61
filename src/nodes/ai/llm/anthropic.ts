import Anthropic from '@anthropic-ai/sdk';
import type {
  ContentBlockParam,
  Message,
  MessageCreateParamsNonStreaming,
  MessageParam,
} from '@anthropic-ai/sdk/resources/messages';
import { toNodeError } from './provider-errors.js';
import { type AdapterOptions, baseUrlSetting, requiredSetting } from './provider-settings.js';
import type { ChatCompletionRequest, ChatCompletionResult, ChatMessage, ContentPart, LlmAdapter } from './types.js';

/** The Messages API requires a limit; used only when the caller has none. */
const FALLBACK_MAX_TOKENS = 4096;
/** Media types the Messages API takes as `image` blocks; PDFs go as `document` blocks. */
const IMAGE_TYPES = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);

function block(part: ContentPart): ContentBlockParam {
  if (part.type === 'text') return { type: 'text', text: part.text };
  if (IMAGE_TYPES.has(part.mimeType)) {
    return { type: 'image', source: { type: 'base64', media_type: part.mimeType as 'image/png', data: part.base64 } };
  }
  if (part.mimeType === 'application/pdf')
    return { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: part.base64 } };
  // Plain text files are documents too; other types the API does not take are named, not sent.
  if (part.mimeType.startsWith('text/'))
    return {
      type: 'document',
      source: { type: 'text', media_type: 'text/plain', data: Buffer.from(part.base64, 'base64').toString('utf8') },
    };
  return { type: 'text', text: `[file ${part.name ?? ''} of type ${part.mimeType} not supported by Anthropic]` };
}

/** Tool results go back as `tool_result` blocks of one user turn, as the API requires. */
function toAnthropicMessages(messages: ChatMessage[]): MessageParam[] {
  const out: MessageParam[] = [];
  for (const m of messages) {
    if (m.role === 'system') continue;
    if (m.role === 'tool') {
      const result: ContentBlockParam = { type: 'tool_result', tool_use_id: m.toolCallId, content: m.content };
      const last = out.at(-1);
      if (last?.role === 'user' && Array.isArray(last.content) && last.content.every((b) => b.type === 'tool_result'))
        last.content.push(result);
      else out.push({ role: 'user', content: [result] });
    } else if (m.role === 'assistant') {
      const calls = (m.toolCalls ?? []).map((c): ContentBlockParam => ({
        type: 'tool_use',
        id: c.id,
        name: c.name,
        input: JSON.parse(c.arguments || '{}') as unknown,
      }));
      out.push({
        role: 'assistant',
        content:
          calls.length > 0 ? [...(m.content ? [{ type: 'text' as const, text: m.content }] : []), ...calls] : m.content,
      });
    } else {
      out.push({ role: 'user', content: typeof m.content === 'string' ? m.content : m.content.map(block) });
    }
  }
  return out;
}

function requestBody(request: ChatCompletionRequest): MessageCreateParamsNonStreaming {
  // The Messages API takes the system prompt as a parameter, not as a message. It has no JSON
  // mode: the caller's system prompt already asks for JSON matching the schema.
  const system = request.messages.flatMap((m) => (m.role === 'system' ? [m.content] : [])).join('\n\n');
  const maxTokens = request.maxTokens ?? FALLBACK_MAX_TOKENS;
  const body: MessageCreateParamsNonStreaming = {
    model: request.model,
    max_tokens: maxTokens,
    messages: toAnthropicMessages(request.messages),
  };
  if (system) body.system = system;
  if (request.tools && request.tools.length > 0) {
    body.tools = request.tools.map((t) => ({
      name: t.name,
      description: t.description,
      input_schema: { ...t.parameters, type: 'object' },
    }));
    body.tool_choice = { type: 'auto' };
  }
  if (request.thinkingBudgetTokens !== undefined) {
    // Thinking needs its budget below max_tokens and takes no sampling settings.
    body.thinking = {
      type: 'enabled',
      budget_tokens: Math.min(request.thinkingBudgetTokens, Math.max(1024, maxTokens - 1)),
    };
    if (body.max_tokens <= body.thinking.budget_tokens) body.max_tokens = body.thinking.budget_tokens + 1;
    return body;
  }
  // Anthropic asks for temperature OR top_p, and newer models reject both together.
  if (request.temperature !== undefined) body.temperature = request.temperature;
  else if (request.topP !== undefined) body.top_p = request.topP;
  return body;
}

function resultOf(message: Message): ChatCompletionResult {
  const text = message.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('');
  const toolCalls = message.content.flatMap((b) =>
    b.type === 'tool_use' ? [{ id: b.id, name: b.name, arguments: JSON.stringify(b.input ?? {}) }] : [],
  );
  // Anthropic's input_tokens leave out the prompt's cached part: read and written are counted apart.
  const { output_tokens: completion } = message.usage;
  const cached = message.usage.cache_read_input_tokens ?? 0;
  const written = message.usage.cache_creation_input_tokens ?? 0;
  const prompt = message.usage.input_tokens + cached + written;
  return {
    text,
    ...(toolCalls.length > 0 ? { toolCalls } : {}),
    usage: {
      prompt_tokens: prompt,
      completion_tokens: completion,
      total_tokens: prompt + completion,
      ...(cached > 0 ? { cached_tokens: cached } : {}),
      ...(written > 0 ? { cache_write_tokens: written } : {}),
    },
  };
}

/**
 * `anthropic/*`: the Messages API through the official SDK; ANTHROPIC_API_BASE overrides the host.
 * Streamed (the SDK assembling the same message) when the caller takes text as it comes and offers no tools.
 */
export async function anthropicAdapter(options: AdapterOptions): Promise<LlmAdapter> {
  const apiKey = await requiredSetting(options.secret, 'ANTHROPIC_API_KEY');
  const baseURL = await baseUrlSetting(options.secret, 'ANTHROPIC_API_BASE', 'https://api.anthropic.com');
  // An explicit key and base URL keep the SDK from reading ANTHROPIC_* variables or profiles.
  const client = new Anthropic({ apiKey, baseURL, maxRetries: 0, timeout: options.timeoutMs, fetch: options.fetch });
  return {
    async chatCompletion(request) {
      try {
        const { onText } = request;
        if (onText && !(request.tools && request.tools.length > 0)) {
          const stream = client.messages.stream(requestBody(request), { signal: request.signal });
          stream.on('text', (piece) => onText(piece));
          return resultOf(await stream.finalMessage());
        }
        return resultOf(await client.messages.create(requestBody(request), { signal: request.signal }));
      } catch (err) {
        throw toNodeError(err, 'Anthropic', request.signal);
      }
    },
  };
}

import type { Protocol, ScriptedResponse, ScriptedUsage } from './fake-llm-server';

/** A reply's usage as OpenAI reports it: cached prompt tokens are part of prompt_tokens. */
export function openAiUsage(u: ScriptedUsage): Record<string, unknown> {
  return {
    prompt_tokens: u.input,
    completion_tokens: u.output,
    total_tokens: u.input + u.output,
    ...(u.cached ? { prompt_tokens_details: { cached_tokens: u.cached } } : {}),
  };
}

/** A reply's input usage as Anthropic reports it: input_tokens leave out what was read from the cache. */
export function anthropicInputUsage(u: ScriptedUsage): Record<string, number> {
  return { input_tokens: u.input - (u.cached ?? 0), ...(u.cached ? { cache_read_input_tokens: u.cached } : {}) };
}

/** The content in `parts` pieces of about equal length. */
function split(content: string, parts: number): string[] {
  const size = Math.max(1, Math.ceil(content.length / parts));
  const out: string[] = [];
  for (let i = 0; i < content.length; i += size) out.push(content.slice(i, i + size));
  return out;
}

const sse = (data: unknown, event?: string) =>
  `${event ? `event: ${event}\n` : ''}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`;

/** OpenAI's streamed reply: role, content deltas, tool calls, finish reason, then usage and `[DONE]`. */
function openAiStream(model: string, pieces: string[], scripted: ScriptedResponse | undefined): string[] {
  const usage = scripted?.usage ?? { input: 10, output: 10 };
  const base = { id: 'chatcmpl-fake', object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model };
  const choice = (delta: Record<string, unknown>, finish: string | null = null) => ({
    ...base,
    choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }],
  });
  const toolCalls = (scripted?.toolCalls ?? []).map((c, index) => ({
    index,
    id: c.id,
    type: 'function',
    function: { name: c.name, arguments: JSON.stringify(c.arguments) },
  }));
  return [
    choice({ role: 'assistant', content: '' }),
    ...pieces.map((text) => choice({ content: text })),
    ...(toolCalls.length > 0 ? [choice({ tool_calls: toolCalls })] : []),
    choice({}, toolCalls.length > 0 ? 'tool_calls' : 'stop'),
    {
      ...base,
      choices: [],
      usage: openAiUsage(usage),
    },
  ]
    .map((c) => sse(c))
    .concat(sse('[DONE]'));
}

/** Anthropic's streamed message: message_start, a text block's deltas, tool_use blocks, message_delta, message_stop. */
function anthropicStream(model: string, pieces: string[], scripted: ScriptedResponse | undefined): string[] {
  const usage = scripted?.usage ?? { input: 10, output: 10 };
  const calls = scripted?.toolCalls ?? [];
  const out = [
    sse(
      {
        type: 'message_start',
        message: {
          id: 'msg_fake',
          type: 'message',
          role: 'assistant',
          model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { ...anthropicInputUsage(usage), output_tokens: 0 },
        },
      },
      'message_start',
    ),
  ];
  const block = (index: number, start: unknown, deltas: unknown[]) => [
    sse({ type: 'content_block_start', index, content_block: start }, 'content_block_start'),
    ...deltas.map((delta) => sse({ type: 'content_block_delta', index, delta }, 'content_block_delta')),
    sse({ type: 'content_block_stop', index }, 'content_block_stop'),
  ];
  if (pieces.length > 0)
    out.push(
      ...block(
        0,
        { type: 'text', text: '' },
        pieces.map((text) => ({ type: 'text_delta', text })),
      ),
    );
  calls.forEach((c, i) =>
    out.push(
      ...block(i + (pieces.length > 0 ? 1 : 0), { type: 'tool_use', id: c.id, name: c.name, input: {} }, [
        { type: 'input_json_delta', partial_json: JSON.stringify(c.arguments) },
      ]),
    ),
  );
  out.push(
    sse(
      {
        type: 'message_delta',
        delta: { stop_reason: calls.length > 0 ? 'tool_use' : 'end_turn', stop_sequence: null },
        usage: { output_tokens: usage.output },
      },
      'message_delta',
    ),
  );
  out.push(sse({ type: 'message_stop' }, 'message_stop'));
  return out;
}

/** A streamed reply as the protocol's server-sent messages; the content goes in `scripted.chunks` or 3 pieces. */
export function streamMessages(
  protocol: Protocol,
  model: string,
  content: string | null,
  scripted: ScriptedResponse | undefined,
): string[] {
  const pieces = scripted?.chunks ?? (content ? split(content, 3) : []);
  return protocol === 'anthropic' ? anthropicStream(model, pieces, scripted) : openAiStream(model, pieces, scripted);
}

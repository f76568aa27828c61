import type { Protocol, ScriptedResponse } from './fake-llm-server';

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
      usage: { prompt_tokens: usage.input, completion_tokens: usage.output, total_tokens: usage.input + usage.output },
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
          usage: { input_tokens: usage.input, output_tokens: 0 },
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

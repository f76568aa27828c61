import type OpenAI from 'openai';
import type { ChatCompletionCreateParamsNonStreaming } from 'openai/resources/chat/completions';
import { NodeExecutionError } from '../../errors.js';
import { usageOf } from './openai-usage.js';
import type { ChatCompletionResult } from './types.js';

/**
 * One chat completion streamed (`stream: true`): each content chunk goes to `onText` as it
 * arrives, and the chunks add up to the result the same request gives unstreamed (text, refusal,
 * usage from the last chunk, which `include_usage` asks for).
 */
export async function streamChatCompletion(
  client: OpenAI,
  body: ChatCompletionCreateParamsNonStreaming,
  provider: string,
  onText: (text: string) => void,
  signal: AbortSignal | undefined,
): Promise<ChatCompletionResult> {
  const stream = await client.chat.completions.create(
    { ...body, stream: true, stream_options: { include_usage: true } },
    { signal },
  );
  let text = '';
  let refusal = '';
  let choices = 0;
  let usage: ChatCompletionResult['usage'];
  for await (const chunk of stream) {
    if (chunk.usage) ({ usage } = usageOf(chunk.usage));
    const delta = chunk.choices[0]?.delta;
    if (!delta) continue;
    choices++;
    if (delta.refusal) refusal += delta.refusal;
    if (delta.content) {
      text += delta.content;
      onText(delta.content);
    }
  }
  if (choices === 0) throw new NodeExecutionError(`${provider} returned no choices`);
  if (refusal) throw new NodeExecutionError(`${provider} refused the request: ${refusal}`);
  return { text, ...(usage ? { usage } : {}) };
}

import { defineRoute, type MountableRoute } from '../../http/route';
import { ChatCompletionRequest, ChatCompletionResponse } from './chat-completions.schemas';
import type { ChatCompletionService } from './chat-completions.service';

/**
 * A completion as OpenAI's stream of `chat.completion.chunk` events: the role, the content, the
 * finish reason, then `[DONE]`. The run produces its answer at its end, so the chunks are sent
 * together once it has ended (a failed run is still an HTTP error, not a broken stream).
 */
export function toSseChunks(completion: ChatCompletionResponse): string {
  const chunk = (delta: Record<string, unknown>, finish: string | null) =>
    `data: ${JSON.stringify({ id: completion.id, object: 'chat.completion.chunk', created: completion.created, model: completion.model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const content = completion.choices[0]?.message.content ?? '';
  return `${chunk({ role: 'assistant', content: '' }, null)}${chunk({ content }, null)}${chunk({}, 'stop')}data: [DONE]\n\n`;
}

/**
 * PySpur's OpenAI-compatible endpoint: any OpenAI client can talk to a chatbot workflow. PySpur
 * mounts it under `/api` twice, so its clients use `/api/api/v1`; `/api/v1` is served too.
 */
export function chatCompletionRoutes(chat: ChatCompletionService): MountableRoute[] {
  return ['/v1/chat/completions', '/api/v1/chat/completions'].map((path) =>
    defineRoute({
      method: 'post',
      path,
      permission: 'run',
      audit: { action: 'chat_completion.create' },
      summary: 'OpenAI-compatible chat completion: model = workflow id (stream: SSE chunks)',
      tags: ['openai-compatible'],
      body: ChatCompletionRequest,
      response: ChatCompletionResponse,
      errors: [400, 404, 409],
      handler: async ({ body }, ctx) => {
        const completion = await chat.complete(body);
        if (!body.stream) return completion;
        ctx.type = 'text/event-stream';
        ctx.set('Cache-Control', 'no-cache');
        return toSseChunks(completion);
      },
    }),
  );
}

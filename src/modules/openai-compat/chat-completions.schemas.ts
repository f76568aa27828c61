import { z } from '../../zod';
import { TokenUsageResponse } from '../../runs/response.schemas';

const ContentPart = z.looseObject({ type: z.string(), text: z.string().optional() });

export const ChatMessageIn = z.looseObject({
  role: z.string(),
  content: z.union([z.string(), z.array(ContentPart)]).nullish(),
});
export type ChatMessageIn = z.output<typeof ChatMessageIn>;

/** OpenAI's chat-completions request; the model is the workflow id. Sampling fields are accepted and ignored (the workflow's nodes decide). */
export const ChatCompletionRequest = z
  .looseObject({
    model: z.string().min(1).max(200).openapi({ description: 'The id of the workflow to run (a CHATBOT spur)' }),
    messages: z.array(ChatMessageIn).min(1),
    stream: z.boolean().default(false),
    user: z.string().max(500).nullish().openapi({ description: 'Passed to the workflow as session_id when given' }),
  })
  .openapi('ChatCompletionRequest');
export type ChatCompletionRequest = z.output<typeof ChatCompletionRequest>;

export const ChatCompletionResponse = z
  .object({
    id: z.string(),
    object: z.literal('chat.completion'),
    created: z.number().int(),
    model: z.string(),
    choices: z.array(
      z.object({
        index: z.number().int(),
        message: z.object({ role: z.literal('assistant'), content: z.string() }),
        finish_reason: z.string(),
      }),
    ),
    usage: TokenUsageResponse,
  })
  .openapi('ChatCompletionResponse');
export type ChatCompletionResponse = z.output<typeof ChatCompletionResponse>;

import { valueAtPath } from '../../paths.js';
import { renderTemplate } from '../../templates.js';
import type { NodeExecutionContext, NodeInput } from '../../types.js';
import { filePart } from './file-parts.js';
import type { ChatMessage } from './types.js';

/** The config fields that shape the conversation sent to the model. */
export interface MessageConfig {
  system_message: string;
  user_message: string;
  few_shot_examples?: { input: string; output: string }[] | null;
  enable_message_history?: boolean;
  message_history_variable?: string | null;
  url_variables?: Record<string, string> | null;
}

/** Appended to the system prompt: the instruction works for every provider, JSON mode or not. */
export function jsonInstruction(schema: Record<string, unknown>): string {
  return `Respond with a single JSON object that matches this JSON Schema, and nothing else:\n${JSON.stringify(schema)}`;
}

/** Earlier turns at `message_history_variable` (a dotted path into the input), as PySpur reads them. */
function history(config: MessageConfig, input: NodeInput): ChatMessage[] {
  if (!config.enable_message_history || !config.message_history_variable) return [];
  const { value } = valueAtPath(input, config.message_history_variable);
  if (!Array.isArray(value)) return [];
  return value.flatMap((entry: unknown) => {
    if (entry === null || typeof entry !== 'object') return [];
    const { role, content } = entry as Record<string, unknown>;
    const known = role === 'user' || role === 'assistant' || role === 'system';
    return known && typeof content === 'string' ? [{ role, content } as ChatMessage] : [];
  });
}

/**
 * System prompt (rendered, plus the JSON instruction), few-shot examples as alternating user and
 * assistant turns, message history, then the rendered user message; an empty user message sends
 * the whole input as indented JSON. A file named by `url_variables.file` (PySpur reads only that
 * key) joins the user message as a content part, its bytes read from storage here.
 */
export async function buildMessages(
  config: MessageConfig,
  input: NodeInput,
  instruction: string | undefined,
  ctx: NodeExecutionContext,
): Promise<ChatMessage[]> {
  const rendered = await renderTemplate(config.system_message, input, 'system_message');
  const system = [rendered, instruction].filter((part) => part && part.trim() !== '').join('\n\n');
  const user =
    config.user_message.trim() === ''
      ? JSON.stringify(input, null, 2)
      : await renderTemplate(config.user_message, input, 'user_message');
  const examples = (config.few_shot_examples ?? []).flatMap((example): ChatMessage[] => [
    { role: 'user', content: example.input },
    { role: 'assistant', content: example.output },
  ]);
  const fileVariable = config.url_variables?.file;
  const file = fileVariable ? await filePart(valueAtPath(input, fileVariable).value, fileVariable, ctx) : null;
  const last: ChatMessage = { role: 'user', content: file ? [{ type: 'text', text: user }, file] : user };
  return [
    ...(system ? [{ role: 'system' as const, content: system }] : []),
    ...examples,
    ...history(config, input),
    last,
  ];
}

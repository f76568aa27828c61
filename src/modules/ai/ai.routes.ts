import { z } from 'zod';
import { BadRequestError } from '../../errors';
import { defineRoute, type MountableRoute } from '../../http/route';
import { parseJsonReply } from '../../nodes/ai/llm/json-output';
import type { AiAssist } from './ai-assist';

const tags = ['ai'];

const SchemaRequest = z.object({
  description: z.string().min(1).max(10_000),
  existing_schema: z.string().max(100_000).nullish(),
});
const MessageRequest = z.object({
  description: z.string().min(1).max(10_000),
  message_type: z.enum(['system', 'user']),
  existing_message: z.string().max(100_000).nullish(),
  context: z.string().max(100_000).nullish(),
  available_variables: z.array(z.string().max(200)).max(200).nullish(),
});

const SCHEMA_SYSTEM = [
  'You design JSON Schemas for the structured output of a workflow step.',
  'Reply with one JSON Schema object and nothing else: type "object" at the root, a "properties" object',
  'with a type and a short description for every field, and a "required" list.',
].join(' ');

function messageSystem(kind: 'system' | 'user'): string {
  const what =
    kind === 'system'
      ? 'system prompts that set the role, rules and output format of an AI assistant'
      : 'user prompts that ask an AI assistant for one specific piece of work';
  return `You write ${what}. Be specific and brief, structure the prompt with short headings and a numbered "Instructions" list, and reply with the prompt text only: no preamble, no code fences.`;
}

function messagePrompt(body: z.output<typeof MessageRequest>): string {
  const parts = [`Write a ${body.message_type} prompt for: ${body.description}`];
  if (body.existing_message) parts.push(`Improve on this current version:\n${body.existing_message}`);
  if (body.context) parts.push(`Context:\n${body.context}`);
  if (body.available_variables?.length) {
    parts.push(
      `Use these template variables where they belong, written as {{ name }}, and no others:\n${body.available_variables.map((v) => `- ${v}`).join('\n')}`,
    );
  }
  return parts.join('\n\n');
}

/** A model's wrapper (`{"output": "<schema text>"}`) or a fenced block, unwrapped. */
function schemaFrom(text: string): Record<string, unknown> {
  const parsed = parseJsonReply(text);
  let value = parsed.ok ? parsed.value : undefined;
  if (value && typeof value === 'object' && typeof (value as { output?: unknown }).output === 'string') {
    const inner = parseJsonReply((value as { output: string }).output);
    value = inner.ok ? inner.value : value;
  }
  if (!value || typeof value !== 'object' || Array.isArray(value) || !('type' in value) || !('properties' in value)) {
    throw new BadRequestError(
      'The model did not answer with a JSON Schema that has "type" and "properties"; try a clearer description',
    );
  }
  return value as Record<string, unknown>;
}

/** The editor's "AI generate" buttons, answered by the configured LLM provider. */
export function aiRoutes(complete: AiAssist): MountableRoute[] {
  return [
    defineRoute({
      method: 'post',
      path: '/ai/generate_schema/',
      permission: 'build',
      summary: 'Generate an output JSON Schema from a description',
      tags,
      body: SchemaRequest,
      response: z.record(z.string(), z.unknown()),
      errors: [400],
      handler: async ({ body }) => {
        const ask = body.existing_schema
          ? `${body.description}\n\nStart from this schema and keep what still fits:\n${body.existing_schema}`
          : body.description;
        const text = await complete({
          messages: [
            { role: 'system', content: SCHEMA_SYSTEM },
            { role: 'user', content: ask },
          ],
          json: true,
          maxTokens: 2000,
        });
        return schemaFrom(text);
      },
    }),
    defineRoute({
      method: 'post',
      path: '/ai/generate_message/',
      permission: 'build',
      summary: 'Generate a system or user prompt from a description',
      tags,
      body: MessageRequest,
      response: z.object({ message: z.string() }),
      errors: [400],
      handler: async ({ body }) => {
        const text = await complete({
          messages: [
            { role: 'system', content: messageSystem(body.message_type) },
            { role: 'user', content: messagePrompt(body) },
          ],
          json: false,
          maxTokens: 1500,
        });
        return { message: text.replace(/^```[a-z]*\n?|\n?```$/g, '').trim() };
      },
    }),
  ];
}

import { NodeExecutionError, TransientNodeError } from '../../nodes/errors';
import { adapterFor } from '../../nodes/ai/llm/adapters';
import type { ChatMessage } from '../../nodes/ai/llm/types';
import { SpurError, BadRequestError } from '../../errors';
import type { EnvService } from '../env-mgmt/env-mgmt.service';
import type { OutboundFetch } from '../../outbound/outbound-fetch';

/**
 * The model behind the editor's "AI generate" buttons: the first provider whose key is set in env
 * management, in this order. PySpur always calls openai/o3-mini; Spur uses what is configured.
 */
const ASSIST_MODELS: readonly { key: string; model: string }[] = [
  { key: 'OPENAI_API_KEY', model: 'openai/gpt-4o-mini' },
  { key: 'ANTHROPIC_API_KEY', model: 'anthropic/claude-3-5-haiku-latest' },
  { key: 'GEMINI_API_KEY', model: 'gemini/gemini-1.5-flash' },
  { key: 'DEEPSEEK_API_KEY', model: 'deepseek/deepseek-chat' },
];

const TIMEOUT_MS = 90_000;

export interface AssistRequest {
  messages: ChatMessage[];
  json: boolean;
  maxTokens: number;
}

/** One chat completion with the configured provider; a 400 names the keys when none is set. */
export function createAiAssist(env: EnvService, fetch: OutboundFetch) {
  return async function complete({ messages, json, maxTokens }: AssistRequest): Promise<string> {
    let chosen: (typeof ASSIST_MODELS)[number] | undefined;
    for (const candidate of ASSIST_MODELS) {
      if ((await env.reveal(candidate.key))?.trim()) {
        chosen = candidate;
        break;
      }
    }
    if (!chosen) {
      throw new BadRequestError(
        `No LLM provider key is set: set ${ASSIST_MODELS.map((m) => m.key).join(', or ')} in the environment settings (/api/env-mgmt/)`,
        'LLM_KEY_MISSING',
      );
    }
    try {
      const { adapter, model } = await adapterFor(chosen.model, { secret: env.reveal, timeoutMs: TIMEOUT_MS, fetch });
      const reply = await adapter.chatCompletion({
        model,
        messages,
        maxTokens,
        temperature: 0.3,
        ...(json ? { jsonSchema: { type: 'object' } } : {}),
      });
      return reply.text;
    } catch (err) {
      if (err instanceof NodeExecutionError || err instanceof TransientNodeError) {
        throw new SpurError('upstream_failed', 'LLM_PROVIDER_ERROR', `${chosen.model}: ${err.message}`);
      }
      throw err;
    }
  };
}

export type AiAssist = ReturnType<typeof createAiAssist>;

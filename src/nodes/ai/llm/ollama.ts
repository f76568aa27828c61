import OpenAI from 'openai';
import { openAiChatAdapter, openAiClientOptions } from './openai-chat.js';
import { type AdapterOptions, baseUrlSetting } from './provider-settings.js';
import type { LlmAdapter } from './types.js';

/** `ollama/*`: a local Ollama server's OpenAI-compatible API under `/v1`. */
export async function ollamaAdapter(options: AdapterOptions): Promise<LlmAdapter> {
  const server = await baseUrlSetting(options.secret, 'OLLAMA_BASE_URL', 'http://127.0.0.1:11434');
  // Ollama needs no key, but the SDK refuses to start without one; Ollama ignores it.
  const client = new OpenAI(openAiClientOptions('ollama', `${server.replace(/\/+$/, '')}/v1`, options));
  return openAiChatAdapter(client, { provider: 'Ollama', jsonMode: 'json_schema', maxTokensParam: 'max_tokens' });
}

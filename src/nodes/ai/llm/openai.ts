import OpenAI from 'openai';
import { openAiChatAdapter, openAiClientOptions } from './openai-chat.js';
import { type AdapterOptions, baseUrlSetting, requiredSetting } from './provider-settings.js';
import type { LlmAdapter } from './types.js';

/** `openai/*`: api.openai.com, or OPENAI_API_BASE (which includes the `/v1`). */
export async function openAiAdapter(options: AdapterOptions): Promise<LlmAdapter> {
  const apiKey = await requiredSetting(options.secret, 'OPENAI_API_KEY');
  const baseURL = await baseUrlSetting(options.secret, 'OPENAI_API_BASE', 'https://api.openai.com/v1');
  const client = new OpenAI(openAiClientOptions(apiKey, baseURL, options));
  return openAiChatAdapter(client, {
    provider: 'OpenAI',
    jsonMode: 'json_schema',
    maxTokensParam: 'max_completion_tokens',
  });
}

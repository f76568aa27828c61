import OpenAI from 'openai';
import { openAiChatAdapter, openAiClientOptions } from './openai-chat.js';
import { type AdapterOptions, baseUrlSetting, requiredSetting } from './provider-settings.js';
import type { LlmAdapter } from './types.js';

/** `xai/*`: xAI's OpenAI-compatible API. */
export async function xaiAdapter(options: AdapterOptions): Promise<LlmAdapter> {
  const apiKey = await requiredSetting(options.secret, 'XAI_API_KEY');
  const baseURL = await baseUrlSetting(options.secret, 'XAI_API_BASE', 'https://api.x.ai/v1');
  const client = new OpenAI(openAiClientOptions(apiKey, baseURL, options));
  return openAiChatAdapter(client, { provider: 'xAI', jsonMode: 'json_schema', maxTokensParam: 'max_tokens' });
}

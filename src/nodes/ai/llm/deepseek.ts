import OpenAI from 'openai';
import { openAiChatAdapter, openAiClientOptions } from './openai-chat.js';
import { type AdapterOptions, baseUrlSetting, requiredSetting } from './provider-settings.js';
import type { LlmAdapter } from './types.js';

/** `deepseek/*`: DeepSeek's OpenAI-compatible API, which has JSON mode but no JSON-schema mode. */
export async function deepSeekAdapter(options: AdapterOptions): Promise<LlmAdapter> {
  const apiKey = await requiredSetting(options.secret, 'DEEPSEEK_API_KEY');
  const baseURL = await baseUrlSetting(options.secret, 'DEEPSEEK_API_BASE', 'https://api.deepseek.com');
  const client = new OpenAI(openAiClientOptions(apiKey, baseURL, options));
  return openAiChatAdapter(client, { provider: 'DeepSeek', jsonMode: 'json_object', maxTokensParam: 'max_tokens' });
}

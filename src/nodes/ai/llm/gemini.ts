import OpenAI from 'openai';
import { openAiChatAdapter, openAiClientOptions } from './openai-chat.js';
import { type AdapterOptions, baseUrlSetting, requiredSetting } from './provider-settings.js';
import type { LlmAdapter } from './types.js';

/** `gemini/*`: Gemini's OpenAI-compatible endpoint (chat completions with JSON-schema output). */
export async function geminiAdapter(options: AdapterOptions): Promise<LlmAdapter> {
  const apiKey = await requiredSetting(options.secret, 'GEMINI_API_KEY');
  const baseURL = await baseUrlSetting(
    options.secret,
    'GEMINI_API_BASE',
    'https://generativelanguage.googleapis.com/v1beta/openai/',
  );
  const client = new OpenAI(openAiClientOptions(apiKey, baseURL, options));
  return openAiChatAdapter(client, { provider: 'Gemini', jsonMode: 'json_schema', maxTokensParam: 'max_tokens' });
}

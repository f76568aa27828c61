import { AzureOpenAI } from 'openai';
import { openAiChatAdapter, openAiClientOptions } from './openai-chat.js';
import { type AdapterOptions, requiredSetting } from './provider-settings.js';
import type { LlmAdapter } from './types.js';

/**
 * `azure/*`: Azure OpenAI. The model name after `azure/` is the deployment name, so requests go
 * to `{endpoint}/openai/deployments/{deployment}/chat/completions?api-version=…` with an
 * `api-key` header.
 */
export async function azureAdapter(options: AdapterOptions, deployment: string): Promise<LlmAdapter> {
  const apiKey = await requiredSetting(options.secret, 'AZURE_OPENAI_API_KEY');
  const endpoint = await requiredSetting(options.secret, 'AZURE_OPENAI_ENDPOINT');
  const apiVersion = await requiredSetting(options.secret, 'AZURE_OPENAI_API_VERSION');
  // The base URL is built here rather than passing `endpoint`: given neither, the SDK would fall
  // back to OPENAI_BASE_URL / AZURE_OPENAI_ENDPOINT from process.env.
  const baseURL = `${endpoint.replace(/\/+$/, '')}/openai`;
  const client = new AzureOpenAI({ ...openAiClientOptions(apiKey, baseURL, options), apiVersion, deployment });
  // Older deployments (gpt-35-turbo, api versions before 2024-08) have JSON mode but no JSON schema.
  return openAiChatAdapter(client, { provider: 'Azure OpenAI', jsonMode: 'json_object', maxTokensParam: 'max_tokens' });
}

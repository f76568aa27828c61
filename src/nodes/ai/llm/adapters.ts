import { NodeExecutionError } from '../../errors.js';
import { anthropicAdapter } from './anthropic.js';
import { azureAdapter } from './azure.js';
import { deepSeekAdapter } from './deepseek.js';
import { geminiAdapter } from './gemini.js';
import { ollamaAdapter } from './ollama.js';
import { openAiAdapter } from './openai.js';
import type { AdapterOptions } from './provider-settings.js';
import type { LlmAdapter } from './types.js';
import { xaiAdapter } from './xai.js';

type AdapterFactory = (options: AdapterOptions, model: string) => Promise<LlmAdapter>;

const FACTORIES: Record<string, AdapterFactory> = {
  openai: openAiAdapter,
  azure: azureAdapter,
  anthropic: anthropicAdapter,
  gemini: geminiAdapter,
  deepseek: deepSeekAdapter,
  ollama: ollamaAdapter,
  xai: xaiAdapter,
};

/**
 * The adapter for a `provider/model` id and the model name the provider knows it by. PySpur's
 * Azure routing: with AZURE_OPENAI_API_KEY set, OpenAI models go to Azure OpenAI, the model name
 * being the deployment (PySpur sends every non-Ollama model there; other providers' models are
 * not deployable on Azure OpenAI, so only `openai/*` is routed).
 */
export async function adapterFor(
  modelId: string,
  options: AdapterOptions,
): Promise<{ adapter: LlmAdapter; model: string }> {
  const slash = modelId.indexOf('/');
  let provider = slash > 0 ? modelId.slice(0, slash) : '';
  if (provider === 'openai' && (await options.secret('AZURE_OPENAI_API_KEY'))?.trim()) provider = 'azure';
  const factory = Object.hasOwn(FACTORIES, provider) ? FACTORIES[provider] : undefined;
  if (!factory) throw new NodeExecutionError(`Unsupported LLM model '${modelId}': unknown provider '${provider}'`);
  const model = modelId.slice(slash + 1);
  return { adapter: await factory(options, model), model };
}

import { NodeExecutionError } from '../../errors.js';
import type { AdapterOptions } from './provider-settings.js';
import type { LlmAdapter } from './types.js';

type AdapterFactory = (options: AdapterOptions, model: string) => Promise<LlmAdapter>;

/**
 * Each provider's module, loaded on its first call: the provider SDKs are a tenth of an api's or a
 * worker's start-up, and most installations call one or two providers. `require`, not `import()`:
 * under tsx's CommonJS hook (the test suite's in-process api) only `require` finds a `.js` import's
 * TypeScript source; compiled, both are the same.
 */
const FACTORIES: Record<string, () => AdapterFactory> = {
  openai: () => (require('./openai.js') as typeof import('./openai.js')).openAiAdapter,
  azure: () => (require('./azure.js') as typeof import('./azure.js')).azureAdapter,
  anthropic: () => (require('./anthropic.js') as typeof import('./anthropic.js')).anthropicAdapter,
  gemini: () => (require('./gemini.js') as typeof import('./gemini.js')).geminiAdapter,
  deepseek: () => (require('./deepseek.js') as typeof import('./deepseek.js')).deepSeekAdapter,
  ollama: () => (require('./ollama.js') as typeof import('./ollama.js')).ollamaAdapter,
  xai: () => (require('./xai.js') as typeof import('./xai.js')).xaiAdapter,
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
  const load = Object.hasOwn(FACTORIES, provider) ? FACTORIES[provider] : undefined;
  if (!load) throw new NodeExecutionError(`Unsupported LLM model '${modelId}': unknown provider '${provider}'`);
  const model = modelId.slice(slash + 1);
  const factory = load();
  return { adapter: await factory(options, model), model };
}

type GenaiPrices = typeof import('@pydantic/genai-prices');

/** The package's data is half a megabyte of JavaScript: loaded on the first price asked for, not at start. */
let genaiPrices: GenaiPrices | undefined;
const calcPrice: GenaiPrices['calcPrice'] = (...args) =>
  (genaiPrices ??= require('@pydantic/genai-prices') as GenaiPrices).calcPrice(...args);

/**
 * Model prices as published by Pydantic's genai-prices (the package's own data, bundled: nothing
 * is fetched). Spur's model ids are `provider/model`; the package names some providers otherwise.
 * Ollama models run on the user's own hardware: the package has no price for them, and Spur
 * makes none up.
 */
export const PRICE_SOURCE = '@pydantic/genai-prices 0.1.8';

const PROVIDER_IDS: Readonly<Record<string, string>> = {
  openai: 'openai',
  azure: 'azure',
  anthropic: 'anthropic',
  gemini: 'google',
  deepseek: 'deepseek',
  xai: 'x-ai',
};

/**
 * Tokens of one model request. `cached_tokens` (read from the provider's prompt cache) and
 * `cache_write_tokens` (written to it) are parts of `prompt_tokens`, billed at their own rates.
 */
export interface CallTokens {
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens?: number;
  cache_write_tokens?: number;
}

/** USD per million tokens. */
export interface ModelPrice {
  input_usd_per_mtok: number;
  output_usd_per_mtok: number;
  cached_input_usd_per_mtok: number | null;
}

function split(modelId: string): { providerId: string; model: string } | null {
  const slash = modelId.indexOf('/');
  const providerId = slash > 0 ? PROVIDER_IDS[modelId.slice(0, slash)] : undefined;
  return providerId ? { providerId, model: modelId.slice(slash + 1) } : null;
}

function usageOf(tokens: CallTokens): Record<string, number> {
  return {
    input_tokens: tokens.prompt_tokens,
    output_tokens: tokens.completion_tokens,
    ...(tokens.cached_tokens ? { cache_read_tokens: tokens.cached_tokens } : {}),
    ...(tokens.cache_write_tokens ? { cache_write_tokens: tokens.cache_write_tokens } : {}),
  };
}

/** What one request cost at the published price (tiers applied), or null for a model with none. */
export function seededCostUsd(modelId: string, tokens: CallTokens, at: Date): number | null {
  const ref = split(modelId);
  if (!ref) return null;
  return calcPrice(usageOf(tokens), ref.model, { providerId: ref.providerId, timestamp: at })?.total_price ?? null;
}

/**
 * The published per-million prices of a model (the base rate of a tiered price), for the price
 * table; `tiered` says a long prompt costs more than the base rate.
 */
export function seededPrice(modelId: string, at: Date): (ModelPrice & { tiered: boolean }) | null {
  const ref = split(modelId);
  if (!ref) return null;
  const found = calcPrice({ input_tokens: 0, output_tokens: 0 }, ref.model, {
    providerId: ref.providerId,
    timestamp: at,
  });
  if (!found) return null;
  const rate = (key: string): { usd: number; tiered: boolean } | null => {
    const value = found.model_price[key];
    if (typeof value === 'number') return { usd: value, tiered: false };
    return value ? { usd: value.base, tiered: value.tiers.length > 0 } : null;
  };
  const input = rate('input_mtok');
  const output = rate('output_mtok');
  if (!input || !output) return null;
  const cached = rate('cache_read_mtok');
  return {
    input_usd_per_mtok: input.usd,
    output_usd_per_mtok: output.usd,
    cached_input_usd_per_mtok: cached?.usd ?? null,
    tiered: input.tiered || output.tiered || (cached?.tiered ?? false),
  };
}

/** One request's cost at a flat price (an operator's override): cache writes at the input rate. */
export function flatCostUsd(price: ModelPrice, tokens: CallTokens): number {
  const cached = Math.min(tokens.cached_tokens ?? 0, tokens.prompt_tokens);
  const cachedRate = price.cached_input_usd_per_mtok ?? price.input_usd_per_mtok;
  return (
    ((tokens.prompt_tokens - cached) * price.input_usd_per_mtok +
      cached * cachedRate +
      tokens.completion_tokens * price.output_usd_per_mtok) /
    1_000_000
  );
}

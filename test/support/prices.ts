import { calcPrice } from '@pydantic/genai-prices';

/** Tokens of one model call, as the fake provider reports them (`cached`: prompt tokens read from its cache). */
export interface CallTokens {
  input: number;
  output: number;
  cached?: number;
}

/**
 * The package's own answer for a Spur model id (`openai/…`, `anthropic/…`: the provider ids the
 * package uses too). Asked of @pydantic/genai-prices directly, never of Spur's price listing, so
 * an expected cost cannot share a mistake with what it checks.
 */
function published(model: string, usage: Parameters<typeof calcPrice>[0]) {
  const slash = model.indexOf('/');
  const found = calcPrice(usage, model.slice(slash + 1), { providerId: model.slice(0, slash), timestamp: new Date() });
  if (!found) throw new Error(`@pydantic/genai-prices has no price for ${model}`);
  return found;
}

/**
 * What calls of `model` cost at the package's published price: each call priced on its own and
 * kept to the nano-dollar, as Spur records it.
 */
export function costAtPublishedPrice(model: string, calls: readonly CallTokens[]): number {
  const nano = calls.reduce((sum, c) => {
    // OpenAI and Anthropic both report cache reads as part of the prompt; the package counts them apart.
    const usage = {
      input_tokens: c.input,
      output_tokens: c.output,
      ...(c.cached ? { cache_read_tokens: c.cached } : {}),
    };
    return sum + Math.round(published(model, usage).total_price * 1e9);
  }, 0);
  return nano / 1e9;
}

/** The package's base rates of `model` in USD per million tokens (what GET /api/usage/prices/ should list). */
export function publishedRates(model: string): { input: number; output: number; cachedInput: number | null } {
  const rate = (key: string): number | null => {
    const value = published(model, { input_tokens: 0, output_tokens: 0 }).model_price[key];
    if (value === undefined) return null;
    return typeof value === 'number' ? value : value.base;
  };
  return { input: rate('input_mtok') ?? NaN, output: rate('output_mtok') ?? NaN, cachedInput: rate('cache_read_mtok') };
}

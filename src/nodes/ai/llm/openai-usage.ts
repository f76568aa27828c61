import type { TokenUsage } from './types.js';

/** OpenAI's usage, cached prompt tokens included (`prompt_tokens_details.cached_tokens`). */
export function usageOf(usage: OpenAiUsage | undefined | null): { usage?: TokenUsage } {
  if (!usage) return {};
  const cached = usage.prompt_tokens_details?.cached_tokens ?? 0;
  return {
    usage: {
      prompt_tokens: usage.prompt_tokens,
      completion_tokens: usage.completion_tokens,
      total_tokens: usage.total_tokens,
      ...(cached > 0 ? { cached_tokens: cached } : {}),
    },
  };
}

interface OpenAiUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: { cached_tokens?: number } | null;
}

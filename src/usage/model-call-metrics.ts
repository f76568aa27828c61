import { metrics } from '../metrics/metrics';

const NANO = 1e9;

/**
 * An answered model call, into spur_llm_tokens_total and spur_llm_cost_usd_total. `model` is the
 * node's `provider/model` id: the provider is its prefix (`unknown` without one), the model the
 * rest. Models are a bounded set in practice (an operator's configured choices), not an id per run.
 * An unpriced model's call counts its tokens and no cost.
 */
export function countModelCall(
  model: string,
  tokens: { prompt_tokens: number; completion_tokens: number },
  costNanoUsd: number | null,
): void {
  const slash = model.indexOf('/');
  const labels = { provider: slash > 0 ? model.slice(0, slash) : 'unknown', model: model.slice(slash + 1) };
  metrics.llmTokens.inc({ ...labels, kind: 'prompt' }, tokens.prompt_tokens);
  metrics.llmTokens.inc({ ...labels, kind: 'completion' }, tokens.completion_tokens);
  if (costNanoUsd !== null) metrics.llmCost.inc(labels, costNanoUsd / NANO);
}

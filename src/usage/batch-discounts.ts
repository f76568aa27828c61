import { type BatchProvider, batchProviderOf } from '../engine/provider-batch-plan';

/**
 * What a provider charges for a request in its batch API, as a share of its online price, and
 * where it says so. The price package lists no batch prices, so the discounts are kept here.
 */
export const BATCH_DISCOUNTS: Readonly<Record<BatchProvider, { share: number; source: string }>> = {
  openai: { share: 0.5, source: 'https://platform.openai.com/docs/guides/batch (50% of the online price)' },
  anthropic: {
    share: 0.5,
    source: 'https://docs.anthropic.com/en/docs/build-with-claude/batch-processing (50% of the online price)',
  },
};

/** A model's batch share and its source, for a model whose provider has a batch API. */
export function batchDiscountOf(modelId: string): { share: number; source: string } | undefined {
  const provider = batchProviderOf(modelId);
  return provider ? BATCH_DISCOUNTS[provider] : undefined;
}

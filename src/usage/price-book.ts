import type { Models } from '../db/models';
import { settingsCache } from '../db/settings-cache';
import { type ModelUsage, addModelUsage } from '../engine/run-contract';
import { batchDiscountOf } from './batch-discounts';
import { type CallTokens, type ModelPrice, PRICE_SOURCE, flatCostUsd, seededCostUsd, seededPrice } from './seed-prices';

/** A model's price as the table shows it: an operator's override, the published one, or none. */
export interface PriceEntry extends Partial<ModelPrice> {
  model: string;
  source: 'override' | typeof PRICE_SOURCE | null;
  note: string | null;
  /** In a provider batch (its share of the price above, and where the provider says so); null: no batch API. */
  batch: { input_usd_per_mtok: number | null; output_usd_per_mtok: number | null; source: string } | null;
}

/** How a call was sent: one request, or in a provider batch (billed at the provider's batch share). */
export type CallTier = 'online' | 'batch';

/** One model request, as a node reports it. */
export interface ModelCall extends CallTokens {
  model: string;
}

const NANO = 1e9;

/**
 * Model prices (overrides kept in MongoDB, `model_prices`; published prices from the package) and
 * the cost of model calls at them. Read by the worker as calls are made, and by the api's table.
 */
export function createPriceBook(models: Models, clock: () => Date = () => new Date()) {
  const { ModelPrice } = models;
  const cache = settingsCache(models);

  async function overrideOf(model: string): Promise<ModelPrice | null> {
    const doc = await ModelPrice.findById(model).lean();
    return doc
      ? {
          input_usd_per_mtok: doc.input_usd_per_mtok,
          output_usd_per_mtok: doc.output_usd_per_mtok,
          cached_input_usd_per_mtok: doc.cached_input_usd_per_mtok ?? null,
        }
      : null;
  }

  return {
    async entry(model: string): Promise<PriceEntry> {
      const override = await overrideOf(model);
      if (override) return { model, ...override, source: 'override', note: null, batch: batchOf(model, override) };
      const seeded = seededPrice(model, clock());
      if (!seeded)
        return {
          model,
          source: null,
          note: `No published price for ${model}: set one with PUT /api/usage/prices/${model}`,
          batch: batchOf(model, null),
        };
      const { tiered, ...price } = seeded;
      return {
        model,
        ...price,
        source: PRICE_SOURCE,
        note: tiered ? 'Tiered: long prompts cost more than these base rates, and are priced so' : null,
        batch: batchOf(model, price),
      };
    },
    async set(model: string, price: ModelPrice): Promise<void> {
      await ModelPrice.updateOne({ _id: model }, { $set: { ...price, updated_at: clock() } }, { upsert: true });
      await cache.changed();
    },
    /** False when the model had no override. */
    async reset(model: string): Promise<boolean> {
      const { deletedCount } = await ModelPrice.deleteOne({ _id: model });
      await cache.changed();
      return deletedCount > 0;
    },
    /**
     * Each model's tokens, calls and cost: every request priced on its own (tiers apply per
     * request). Overrides are kept in memory until any setting changes (settings-cache.ts).
     */
    async price(calls: readonly ModelCall[], tier: CallTier = 'online'): Promise<ModelUsage[]> {
      const at = clock();
      const overrides = new Map<string, ModelPrice | null>();
      let byModel: ModelUsage[] = [];
      for (const call of calls) {
        if (!overrides.has(call.model))
          overrides.set(call.model, await cache.get('price', call.model, () => overrideOf(call.model)));
        const override = overrides.get(call.model);
        const usd = override ? flatCostUsd(override, call) : seededCostUsd(call.model, call, at);
        const share = tier === 'batch' ? (batchDiscountOf(call.model)?.share ?? 1) : 1;
        const nano = usd === null ? null : Math.round(usd * share * NANO);
        byModel = addModelUsage(byModel, [
          {
            model: call.model,
            prompt_tokens: call.prompt_tokens,
            completion_tokens: call.completion_tokens,
            calls: 1,
            cost_nano_usd: nano,
          },
        ]);
      }
      return byModel;
    },
  };
}

export type PriceBook = ReturnType<typeof createPriceBook>;

/** A model's batch rates: its provider's share of the rates shown (an override's too). */
function batchOf(model: string, price: ModelPrice | null): PriceEntry['batch'] {
  const discount = batchDiscountOf(model);
  if (!discount) return null;
  const rate = (usd: number | undefined) => (usd === undefined ? null : usd * discount.share);
  return {
    input_usd_per_mtok: rate(price?.input_usd_per_mtok),
    output_usd_per_mtok: rate(price?.output_usd_per_mtok),
    source: discount.source,
  };
}

/** A cost kept in nano-USD, in USD for API answers (null: no price). */
export function usdOf(nanoUsd: number | null): number | null {
  return nanoUsd === null ? null : nanoUsd / NANO;
}

/** A usage's cost for API answers: USD, or null and why when a model called has no price. */
export function costOf(models: readonly ModelUsage[] | undefined): {
  cost_usd: number | null;
  cost_note: string | null;
} {
  if (!models || models.length === 0) return { cost_usd: null, cost_note: 'No priced model call recorded' };
  const unpriced = models.filter((m) => m.cost_nano_usd === null).map((m) => m.model);
  if (unpriced.length > 0)
    return {
      cost_usd: null,
      cost_note: `No price for ${unpriced.join(', ')}: set one with PUT /api/usage/prices/{model}`,
    };
  return { cost_usd: models.reduce((sum, m) => sum + (m.cost_nano_usd ?? 0), 0) / NANO, cost_note: null };
}

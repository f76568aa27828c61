import { trusted } from 'mongoose';
import type { Models } from '../db/models';
import type { ProviderLimitDoc } from '../db/models/provider-limit.model';
import { type LimitRule, limitKeysOf } from '../contracts/limit-contract';

function ruleOf(doc: ProviderLimitDoc): LimitRule {
  return {
    key: doc._id,
    ...(doc.max_concurrent != null ? { max_concurrent: doc.max_concurrent } : {}),
    ...(doc.requests_per_minute != null ? { requests_per_minute: doc.requests_per_minute } : {}),
    ...(doc.tokens_per_minute != null ? { tokens_per_minute: doc.tokens_per_minute } : {}),
  };
}

/** The limits on model requests (`provider_limits`): the api replaces them, workers read them. */
export function createProviderLimits(models: Models, clock: () => Date = () => new Date()) {
  const { ProviderLimit } = models;
  return {
    async list(): Promise<LimitRule[]> {
      return (await ProviderLimit.find().sort({ _id: 1 }).lean()).map(ruleOf);
    },
    /** The limits with these keys, in the order of the keys (a provider's before its model's). */
    async on(keys: readonly string[]): Promise<LimitRule[]> {
      const found = new Map(
        (await ProviderLimit.find({ _id: trusted({ $in: [...keys] }) }).lean()).map((d) => [d._id, ruleOf(d)]),
      );
      return keys.flatMap((key) => found.get(key) ?? []);
    },
    /** Whether any limit applies to a call of one of `models`. */
    async anyOn(models: readonly string[]): Promise<boolean> {
      const keys = models.flatMap(limitKeysOf);
      return keys.length > 0 && (await ProviderLimit.exists({ _id: trusted({ $in: keys }) })) !== null;
    },
    /** The whole set becomes `rules`; answers the keys removed. */
    async replace(rules: readonly LimitRule[]): Promise<string[]> {
      const before = (await ProviderLimit.find({}, { _id: 1 }).lean()).map((d) => d._id);
      const keep = new Set(rules.map((r) => r.key));
      const removed = before.filter((key) => !keep.has(key));
      const at = clock();
      for (const rule of rules)
        await ProviderLimit.replaceOne(
          { _id: rule.key },
          {
            max_concurrent: rule.max_concurrent ?? null,
            requests_per_minute: rule.requests_per_minute ?? null,
            tokens_per_minute: rule.tokens_per_minute ?? null,
            updated_at: at,
          },
          { upsert: true },
        );
      if (removed.length > 0) await ProviderLimit.deleteMany({ _id: trusted({ $in: removed }) });
      return removed;
    },
  };
}

export type ProviderLimits = ReturnType<typeof createProviderLimits>;

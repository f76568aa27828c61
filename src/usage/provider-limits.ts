import { trusted } from 'mongoose';
import type { Models } from '../db/models';
import { settingsCache } from '../db/settings-cache';
import type { ProviderLimitDoc } from '../db/models/provider-limit.model';
import { DEFAULT_WORKSPACE, workspaceScope } from '../db/workspace-scope';
import { type LimitRule, limitKeysOf } from '../contracts/limit-contract';
import type { BreakerRecord, BreakerStateName } from '../contracts/breaker-contract';

/** Whose limits: the current workspace's, or the fleet-wide ones an installation admin sets across workspaces. */
export type LimitScope = 'workspace' | 'fleet';

const FLEET = 'fleet';

/**
 * Where a limit is stored and which limit workflow counts it: `default`'s under the bare key (as
 * before workspaces, so its running limits carry on), another workspace's as `<workspace>:<key>`,
 * the fleet's as `fleet:<key>`.
 */
function prefixOf(scope: LimitScope): string {
  if (scope === FLEET) return `${FLEET}:`;
  const workspaceId = workspaceScope.current() ?? DEFAULT_WORKSPACE;
  return workspaceId === DEFAULT_WORKSPACE ? '' : `${workspaceId}:`;
}

/** The stored ids of one scope: `default`'s have no prefix at all. */
const idsOf = (prefix: string) => (prefix === '' ? /^[^:]+$/ : new RegExp(`^${prefix}`));

/** A stored limit as its scope shows it (`key` without the scope's prefix), or as a limit workflow counts it (the stored id). */
function ruleOf(doc: ProviderLimitDoc, prefix: string | null): LimitRule {
  return {
    key: prefix === null ? doc._id : doc._id.slice(prefix.length),
    ...(doc.max_concurrent != null ? { max_concurrent: doc.max_concurrent } : {}),
    ...(doc.requests_per_minute != null ? { requests_per_minute: doc.requests_per_minute } : {}),
    ...(doc.tokens_per_minute != null ? { tokens_per_minute: doc.tokens_per_minute } : {}),
    ...(doc.breaker ? { breaker: { ...doc.breaker } } : {}),
  };
}

/** A limit as its scope lists it: the rule, and its breaker's last recorded state when it has a breaker or had one opened. */
export interface LimitEntry extends LimitRule {
  breaker_state?: BreakerRecord;
}

function entryOf(doc: ProviderLimitDoc, prefix: string): LimitEntry {
  const rule = ruleOf(doc, prefix);
  const recorded = doc.breaker_state;
  if (recorded)
    return {
      ...rule,
      breaker_state: {
        state: recorded.state as BreakerStateName,
        since: recorded.since,
        opened_by: (recorded.opened_by ?? null) as BreakerRecord['opened_by'],
        failure_times: [...recorded.failure_times],
      },
    };
  return rule.breaker
    ? { ...rule, breaker_state: { state: 'closed', since: 0, opened_by: null, failure_times: [] } }
    : rule;
}

/**
 * The limits on model requests (`provider_limits`): each workspace's, read and replaced inside it,
 * and the fleet's, which apply to every workspace's calls besides its own. The api replaces them,
 * workers read them.
 */
export function createProviderLimits(models: Models, clock: () => Date = () => new Date()) {
  const { ProviderLimit } = models;
  const cache = settingsCache(models);
  /** Every limit that applies to a call in the current workspace with these keys: the fleet's, then the workspace's. */
  const applyingIds = (keys: readonly string[]) => [
    ...keys.map((key) => `${prefixOf(FLEET)}${key}`),
    ...keys.map((key) => `${prefixOf('workspace')}${key}`),
  ];
  return {
    async list(scope: LimitScope): Promise<LimitEntry[]> {
      const prefix = prefixOf(scope);
      const docs = await ProviderLimit.find({ _id: trusted({ $regex: idsOf(prefix) }) })
        .sort({ _id: 1 })
        .lean();
      return docs.map((d) => entryOf(d, prefix));
    },
    /** One limit of the scope by its key, as a limit workflow counts it (its key the stored id); null when there is none. */
    async stored(scope: LimitScope, key: string): Promise<LimitRule | null> {
      const doc = await ProviderLimit.findById(`${prefixOf(scope)}${key}`).lean();
      return doc ? ruleOf(doc, null) : null;
    },
    /** A limit workflow's record of its breaker (`id`: the stored id); a limit removed meanwhile is not written again. */
    async recordBreaker(id: string, record: BreakerRecord): Promise<void> {
      await ProviderLimit.updateOne({ _id: id }, { $set: { breaker_state: record } });
    },
    /**
     * The limits on a call with these keys (a provider's before its model's), the fleet's first;
     * each rule's key is its stored id, which names the limit workflow that counts it. Kept in
     * memory until any setting changes (settings-cache.ts).
     */
    on(keys: readonly string[]): Promise<LimitRule[]> {
      const ids = applyingIds(keys);
      return cache.get('limits', ids.join('\u0000'), async () => {
        const found = new Map(
          (await ProviderLimit.find({ _id: trusted({ $in: ids }) }).lean()).map((d) => [d._id, ruleOf(d, null)]),
        );
        return ids.flatMap((id) => found.get(id) ?? []);
      });
    },
    /** Whether any limit applies to a call of one of `models` in the current workspace. */
    async anyOn(models: readonly string[]): Promise<boolean> {
      const ids = applyingIds(models.flatMap(limitKeysOf));
      return ids.length > 0 && (await ProviderLimit.exists({ _id: trusted({ $in: ids }) })) !== null;
    },
    /** The scope's whole set becomes `rules`; answers the changed and removed limits by stored id (their workflows' keys). */
    async replace(
      scope: LimitScope,
      rules: readonly LimitRule[],
    ): Promise<Array<{ id: string; rule: LimitRule | null }>> {
      const prefix = prefixOf(scope);
      const owner = scope === FLEET ? FLEET : (workspaceScope.current() ?? DEFAULT_WORKSPACE);
      const before = (await ProviderLimit.find({ _id: trusted({ $regex: idsOf(prefix) }) }, { _id: 1 }).lean()).map(
        (d) => d._id,
      );
      const keep = new Set(rules.map((r) => `${prefix}${r.key}`));
      const removed = before.filter((id) => !keep.has(id));
      const at = clock();
      // Set, not replaced: the breaker's recorded state is its limit workflow's to write.
      for (const rule of rules)
        await ProviderLimit.updateOne(
          { _id: `${prefix}${rule.key}` },
          {
            $set: {
              max_concurrent: rule.max_concurrent ?? null,
              requests_per_minute: rule.requests_per_minute ?? null,
              tokens_per_minute: rule.tokens_per_minute ?? null,
              breaker: rule.breaker ?? null,
              workspace_id: owner,
              updated_at: at,
            },
          },
          { upsert: true },
        );
      if (removed.length > 0) await ProviderLimit.deleteMany({ _id: trusted({ $in: removed }) });
      await cache.changed();
      return [
        ...rules.map((rule) => ({ id: `${prefix}${rule.key}`, rule: { ...rule, key: `${prefix}${rule.key}` } })),
        ...removed.map((id) => ({ id, rule: null })),
      ];
    },
  };
}

export type ProviderLimits = ReturnType<typeof createProviderLimits>;

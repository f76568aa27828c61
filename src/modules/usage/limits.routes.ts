import { z } from '../../zod';
import { defineRoute, type MountableRoute } from '../../http/route';
import { LLM_MODEL_IDS } from '../../nodes/ai/model-ids';
import type { LimitScope, ProviderLimits } from '../../usage/provider-limits';
import type { LimitRule } from '../../contracts/limit-contract';

const tags = ['usage'];

/** A limit can name a provider (`openai`) or one of its models (`openai/gpt-4o-mini`). */
const LIMIT_KEYS: ReadonlySet<string> = new Set(LLM_MODEL_IDS.flatMap((id) => [id.split('/')[0] as string, id]));

const PerMinute = z.number().int().min(1).max(100_000_000);

export const LimitRuleSchema = z
  .object({
    key: z
      .string()
      .max(200)
      .refine((key) => LIMIT_KEYS.has(key), { message: 'Not a provider or model id (see GET /api/usage/prices/)' })
      .openapi({ description: 'A provider (`openai`) or one model (`openai/gpt-4o-mini`)' }),
    max_concurrent: z.number().int().min(1).max(10_000).optional().openapi({
      description: 'Model requests in flight at once, across every worker and run it applies to',
    }),
    requests_per_minute: PerMinute.optional().openapi({ description: 'Requests started in any 60 s' }),
    tokens_per_minute: PerMinute.optional().openapi({
      description:
        'Tokens in any 60 s: a request counts its prompt estimate plus its max output tokens until it ends, then what it used',
    }),
  })
  .strict()
  .refine((r) => r.max_concurrent ?? r.requests_per_minute ?? r.tokens_per_minute, {
    message: 'Give at least one of max_concurrent, requests_per_minute, tokens_per_minute',
  })
  .openapi('ProviderLimit', { description: "A workspace's or the fleet's limit on model requests (beyond PySpur)" });

const LimitsBody = z
  .array(LimitRuleSchema)
  .max(500)
  .refine((rules) => new Set(rules.map((r) => r.key)).size === rules.length, {
    message: 'Each key at most once',
  });

/** Tells the running limit workflows of changed and removed rules (null: removed), by the limits' stored ids. */
export type LimitChangeNotifier = (changes: Array<{ key: string; rule: LimitRule | null }>) => Promise<void>;

/** The two scopes' routes differ only in path, permission and words. */
const SCOPES: ReadonlyArray<{
  scope: LimitScope;
  path: string;
  permission: 'limits.manage' | 'fleet.manage';
  whose: string;
  /** The audit trail's name for a replacement. */
  action: string;
}> = [
  {
    scope: 'workspace',
    path: '/limits/',
    permission: 'limits.manage',
    whose: "The workspace's",
    action: 'limit.update',
  },
  {
    scope: 'fleet',
    path: '/limits/fleet/',
    permission: 'fleet.manage',
    whose: "The fleet-wide (across every workspace, besides each workspace's own)",
    action: 'fleet_limit.update',
  },
];

export function limitsRoutes(limits: ProviderLimits, notify: LimitChangeNotifier): MountableRoute[] {
  return SCOPES.flatMap(({ scope, path, permission, whose, action }) => [
    defineRoute({
      method: 'get',
      path,
      summary: `${whose} limits on model requests`,
      tags,
      response: z.array(LimitRuleSchema),
      handler: () => limits.list(scope),
    }),
    defineRoute({
      method: 'put',
      path,
      permission,
      audit: { action, target: 'limit' },
      summary: `Replace ${whose.toLowerCase()} limits on model requests: every run they apply to waits for a slot of each limit on the model it calls`,
      tags,
      body: LimitsBody,
      response: z.array(LimitRuleSchema),
      handler: async ({ body }) => {
        const changes = await limits.replace(scope, body);
        await notify(changes.map(({ id, rule }) => ({ key: id, rule })));
        return limits.list(scope);
      },
    }),
  ]);
}

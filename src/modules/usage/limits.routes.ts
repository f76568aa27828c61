import { z } from '../../zod';
import { defineRoute, type MountableRoute } from '../../http/route';
import { LLM_MODEL_IDS } from '../../nodes/ai/model-ids';
import type { LimitScope, ProviderLimits } from '../../usage/provider-limits';
import type { BreakerSwitch, LimitRule } from '../../contracts/limit-contract';
import { NotFoundError } from '../../errors';
import { noteAudit } from '../../access/audit-note';
import { BreakerRuleSchema, BreakerStateSchema, breakerView } from './breaker-view';

const tags = ['usage'];

/** A limit can name a provider (`openai`) or one of its models (`openai/gpt-4o-mini`). */
const LIMIT_KEYS: ReadonlySet<string> = new Set(LLM_MODEL_IDS.flatMap((id) => [id.split('/')[0] as string, id]));

const PerMinute = z.number().int().min(1).max(100_000_000);

const limitFields = {
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
  breaker: BreakerRuleSchema.optional(),
};

export const LimitRuleSchema = z
  .object(limitFields)
  .strict()
  .refine((r) => r.max_concurrent ?? r.requests_per_minute ?? r.tokens_per_minute ?? r.breaker, {
    message: 'Give at least one of max_concurrent, requests_per_minute, tokens_per_minute, breaker',
  })
  .openapi('ProviderLimit', { description: "A workspace's or the fleet's limit on model requests (beyond PySpur)" });

/** A limit as GET /limits/ lists it: the rule, and its breaker's state when it has a breaker or had one opened by hand. */
const LimitEntrySchema = z
  .object({ ...limitFields, breaker_state: BreakerStateSchema.optional() })
  .openapi('ProviderLimitEntry');

const LimitsBody = z
  .array(LimitRuleSchema)
  .max(500)
  .refine((rules) => new Set(rules.map((r) => r.key)).size === rules.length, {
    message: 'Each key at most once',
  });

const BreakerSwitchBody = z
  .object({
    key: z.string().max(200).openapi({ description: "The limit's key, as GET /limits/ lists it" }),
    state: z.enum(['open', 'closed']).openapi({
      description:
        '`open`: no call of the limit goes out, its runs wait in place, until an operator closes it; `closed`: every waiting run goes on',
    }),
  })
  .strict();

const BreakerSwitchAnswer = z
  .object({ key: z.string(), state: z.enum(['open', 'closed']) })
  .openapi('ProviderLimitBreakerSwitch', {
    description: "The state asked for: the limit's workflow takes it within moments (GET /limits/ shows it then)",
  });

/** Sends an operator's switch to the limit's workflow (`key`: the limit's stored id), starting it if it is not running. */
export type BreakerSwitcher = (key: string, change: BreakerSwitch, scope: LimitScope) => Promise<void>;

/** Tells the running limit workflows of changed and removed rules (null: removed), by the limits' stored ids. */
export type LimitChangeNotifier = (changes: Array<{ key: string; rule: LimitRule | null }>) => Promise<void>;

/** The two scopes' routes differ only in path, permission and words. */
const SCOPES: ReadonlyArray<{
  scope: LimitScope;
  path: string;
  permission: 'limits.manage' | 'fleet.manage';
  whose: string;
  /** The audit trail's names for a replacement and for a breaker's switch. */
  action: string;
  breakerAction: string;
}> = [
  {
    scope: 'workspace',
    path: '/limits/',
    permission: 'limits.manage',
    whose: "The workspace's",
    action: 'limit.update',
    breakerAction: 'limit.breaker',
  },
  {
    scope: 'fleet',
    path: '/limits/fleet/',
    permission: 'fleet.manage',
    whose: "The fleet-wide (across every workspace, besides each workspace's own)",
    action: 'fleet_limit.update',
    breakerAction: 'fleet_limit.breaker',
  },
];

export function limitsRoutes(
  limits: ProviderLimits,
  notify: LimitChangeNotifier,
  switchBreaker: BreakerSwitcher,
): MountableRoute[] {
  return SCOPES.flatMap(({ scope, path, permission, whose, action, breakerAction }) => [
    defineRoute({
      method: 'get',
      path,
      summary: `${whose} limits on model requests`,
      tags,
      response: z.array(LimitEntrySchema),
      handler: () => listed(limits, scope),
    }),
    defineRoute({
      method: 'put',
      path,
      permission,
      audit: { action, target: 'limit' },
      summary: `Replace ${whose.toLowerCase()} limits on model requests: every run they apply to waits for a slot of each limit on the model it calls`,
      tags,
      body: LimitsBody,
      response: z.array(LimitEntrySchema),
      handler: async ({ body }) => {
        const changes = await limits.replace(scope, body);
        await notify(changes.map(({ id, rule }) => ({ key: id, rule })));
        return listed(limits, scope);
      },
    }),
    defineRoute({
      method: 'post',
      path: `${path}breaker/`,
      permission,
      audit: { action: breakerAction, target: 'limit' },
      summary: `Open or close the breaker of one of ${whose.toLowerCase()} limits by hand`,
      description:
        'An opened breaker stays open until closed here (it sends no probe); closing one lets every run waiting for it go on. Any limit has a breaker to switch, with or without a `breaker` rule.',
      tags,
      body: BreakerSwitchBody,
      status: 202,
      response: BreakerSwitchAnswer,
      errors: [404],
      handler: async ({ body }, ctx) => {
        noteAudit(ctx.state, { action: breakerAction, target: { type: 'limit', id: body.key } });
        const rule = await limits.stored(scope, body.key);
        if (!rule) throw new NotFoundError(`No limit with key ${body.key}`);
        await switchBreaker(rule.key, { state: body.state, rule }, scope);
        return { key: body.key, state: body.state };
      },
    }),
  ]);
}

/** The scope's limits, each breaker's recorded state shown as of now. */
async function listed(limits: ProviderLimits, scope: LimitScope) {
  const now = Date.now();
  return (await limits.list(scope)).map((entry) => {
    const { breaker_state: _recorded, ...rule } = entry;
    const view = breakerView(entry, now);
    return view ? { ...rule, breaker_state: view } : rule;
  });
}

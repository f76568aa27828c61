import { z } from '../../zod';
import { defineRoute, type MountableRoute } from '../../http/route';
import { LLM_MODEL_IDS } from '../../nodes/ai/model-ids';
import type { ProviderLimits } from '../../usage/provider-limits';
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
      description: 'Model requests in flight at once, across every worker and run',
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
  .openapi('ProviderLimit', { description: 'A fleet-wide limit on model requests (beyond PySpur)' });

const LimitsBody = z
  .array(LimitRuleSchema)
  .max(500)
  .refine((rules) => new Set(rules.map((r) => r.key)).size === rules.length, {
    message: 'Each key at most once',
  });

/** Tells the running limit workflows of changed and removed rules (null: removed). */
export type LimitChangeNotifier = (changes: Array<{ key: string; rule: LimitRule | null }>) => Promise<void>;

export function limitsRoutes(limits: ProviderLimits, notify: LimitChangeNotifier): MountableRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/limits/',
      summary: 'The fleet-wide limits on model requests',
      tags,
      response: z.array(LimitRuleSchema),
      handler: () => limits.list(),
    }),
    defineRoute({
      method: 'put',
      path: '/limits/',
      permission: 'limits.manage',
      summary:
        'Replace the fleet-wide limits on model requests: every worker and run waits for a slot of each limit on the model it calls',
      tags,
      body: LimitsBody,
      response: z.array(LimitRuleSchema),
      handler: async ({ body }) => {
        const removed = await limits.replace(body);
        await notify([
          ...body.map((rule) => ({ key: rule.key, rule })),
          ...removed.map((key) => ({ key, rule: null })),
        ]);
        return limits.list();
      },
    }),
  ];
}

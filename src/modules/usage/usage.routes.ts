import { z } from 'zod';
import { NotFoundError } from '../../errors';
import { defineRoute, type MountableRoute } from '../../http/route';
import { LLM_MODEL_IDS } from '../../nodes/ai/model-ids';
import type { UsageGroupBy, UsageLedger, UsageTotals } from '../../db/usage-ledger';
import { workspaceScope } from '../../db/workspace-scope';
import { TokenUsageResponse } from '../../runs/response.schemas';
import type { PriceBook } from '../../usage/price-book';

const tags = ['usage'];
const KNOWN_MODELS: ReadonlySet<string> = new Set(LLM_MODEL_IDS);

const UsdPerMillion = z.number().finite().min(0).max(1_000_000);

const PriceEntryResponse = z
  .object({
    model: z.string().openapi({ description: 'The `llm_info.model` id, `provider/model`' }),
    input_usd_per_mtok: z.number().nullable(),
    output_usd_per_mtok: z.number().nullable(),
    cached_input_usd_per_mtok: z.number().nullable(),
    source: z.string().nullable().openapi({
      description:
        '`override` (PUT), the published source (a package, named with its version), or null: no price known',
    }),
    note: z.string().nullable(),
    batch: z
      .object({
        input_usd_per_mtok: z.number().nullable(),
        output_usd_per_mtok: z.number().nullable(),
        source: z.string().openapi({ description: 'Where the provider publishes its batch discount' }),
      })
      .nullable()
      .openapi({
        description:
          'What a call costs in a provider batch (llm_mode `provider_batch`); null: Spur sends this model no provider batch',
      }),
  })
  .openapi('ModelPrice', { description: 'A model’s price in USD per million tokens (beyond PySpur)' });
type PriceEntryResponse = z.output<typeof PriceEntryResponse>;

const SetPriceRequest = z
  .object({
    input_usd_per_mtok: UsdPerMillion,
    output_usd_per_mtok: UsdPerMillion,
    cached_input_usd_per_mtok: UsdPerMillion.nullable().optional(),
  })
  .strict();

/** A model id is `provider/model`: two path segments, since an escaped slash is refused. */
const ModelParams = z.object({ provider: z.string().min(1).max(100), name: z.string().min(1).max(200) });

function knownModel(params: z.output<typeof ModelParams>): string {
  const model = `${params.provider}/${params.name}`;
  if (!KNOWN_MODELS.has(model)) throw new NotFoundError(`Unknown model '${model}': see GET /api/usage/prices/`);
  return model;
}

async function entryResponse(prices: PriceBook, model: string): Promise<PriceEntryResponse> {
  const entry = await prices.entry(model);
  return {
    model,
    input_usd_per_mtok: entry.input_usd_per_mtok ?? null,
    output_usd_per_mtok: entry.output_usd_per_mtok ?? null,
    cached_input_usd_per_mtok: entry.cached_input_usd_per_mtok ?? null,
    source: entry.source,
    note: entry.note,
    batch: entry.batch,
  };
}

const UsageTotalsResponse = TokenUsageResponse.extend({
  cost_usd: z.number().openapi({ description: 'USD of the priced calls, as the tasks recorded them' }),
  calls: z.number().int().openapi({ description: 'Model requests' }),
  runs: z.number().int().openapi({ description: 'Runs with at least one of these calls' }),
  unpriced_calls: z.number().int().openapi({ description: 'Calls of models with no known price (not in cost_usd)' }),
});

const UsageLedgerResponse = z
  .object({
    group_by: z.enum(['workflow', 'model', 'day', 'api_key', 'workspace']),
    from: z.iso.datetime().nullable(),
    to: z.iso.datetime().nullable(),
    groups: z.array(UsageTotalsResponse.extend({ key: z.string() })),
    total: UsageTotalsResponse,
  })
  .openapi('UsageLedger', {
    description: 'LLM spend from the ledger (beyond PySpur): every ended task that called a model, by when it ended',
  });

const LedgerQuery = z
  .object({
    group_by: z.enum(['workflow', 'model', 'day', 'api_key']).default('workflow').openapi({
      description:
        '`day`: the UTC day the task ended; `api_key`: who started the run — `key:` and the first 12 hex digits of the SHA-256 of the API key, `session` (a browser login), `schedule`, `webhook`, or `none` (no keys configured)',
    }),
    from: z.iso.datetime({ offset: true }).optional().openapi({ description: 'Tasks that ended at or after' }),
    to: z.iso.datetime({ offset: true }).optional().openapi({ description: 'Tasks that ended before' }),
  })
  .strict();

const RangeQuery = LedgerQuery.omit({ group_by: true });

/** The ledger's totals over a range, answered as the routes answer them. */
async function ledgerAnswer(
  ledger: UsageLedger,
  groupBy: UsageGroupBy,
  query: { from?: string | undefined; to?: string | undefined },
) {
  const from = query.from ? new Date(query.from) : undefined;
  const to = query.to ? new Date(query.to) : undefined;
  const { groups, total } = await ledger.totals(groupBy, { ...(from ? { from } : {}), ...(to ? { to } : {}) });
  return {
    group_by: groupBy,
    from: from?.toISOString() ?? null,
    to: to?.toISOString() ?? null,
    groups: groups.map(({ key, ...t }) => ({ key, ...totalsResponse(t) })),
    total: totalsResponse(total),
  };
}

function totalsResponse(t: UsageTotals): z.output<typeof UsageTotalsResponse> {
  return {
    prompt_tokens: t.prompt_tokens,
    completion_tokens: t.completion_tokens,
    total_tokens: t.prompt_tokens + t.completion_tokens,
    cost_usd: t.cost_nano_usd / 1e9,
    calls: t.calls,
    runs: t.runs,
    unpriced_calls: t.unpriced_calls,
  };
}

export function usageRoutes(prices: PriceBook, ledger: UsageLedger): MountableRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/usage/',
      summary: "The workspace's LLM tokens, cost, calls and runs from the ledger, per workflow, model, day or key",
      tags,
      query: LedgerQuery,
      response: UsageLedgerResponse,
      handler: ({ query }) => ledgerAnswer(ledger, query.group_by, query),
    }),
    defineRoute({
      method: 'get',
      path: '/usage/workspaces/',
      permission: 'usage.all',
      summary: "Every workspace's LLM tokens, cost, calls and runs, per workspace (an installation admin's)",
      tags,
      query: RangeQuery,
      response: UsageLedgerResponse,
      // The one reading across workspaces: an installation admin's, as its permission says.
      handler: ({ query }) => workspaceScope.unscoped(() => ledgerAnswer(ledger, 'workspace', query)),
    }),
    defineRoute({
      method: 'get',
      path: '/usage/prices/',
      summary: 'The price of every model (published, or an override), in USD per million tokens',
      tags,
      response: z.array(PriceEntryResponse),
      handler: () => Promise.all(LLM_MODEL_IDS.map((model) => entryResponse(prices, model))),
    }),
    defineRoute({
      method: 'get',
      path: '/usage/prices/{provider}/{name}',
      summary: 'A model’s price',
      tags,
      params: ModelParams,
      response: PriceEntryResponse,
      errors: [404],
      handler: ({ params }) => entryResponse(prices, knownModel(params)),
    }),
    defineRoute({
      method: 'put',
      path: '/usage/prices/{provider}/{name}',
      permission: 'fleet.manage',
      summary: 'Set a model’s price: model calls made from now on cost this (recorded costs stay as they were)',
      tags,
      params: ModelParams,
      body: SetPriceRequest,
      response: PriceEntryResponse,
      errors: [404],
      handler: async ({ params, body }) => {
        const model = knownModel(params);
        await prices.set(model, {
          input_usd_per_mtok: body.input_usd_per_mtok,
          output_usd_per_mtok: body.output_usd_per_mtok,
          cached_input_usd_per_mtok: body.cached_input_usd_per_mtok ?? null,
        });
        return entryResponse(prices, model);
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/usage/prices/{provider}/{name}',
      permission: 'fleet.manage',
      summary: 'Remove a model’s override: the published price applies again',
      tags,
      params: ModelParams,
      response: PriceEntryResponse,
      errors: [404],
      handler: async ({ params }) => {
        const model = knownModel(params);
        if (!(await prices.reset(model))) throw new NotFoundError(`No price override for '${model}'`);
        return entryResponse(prices, model);
      },
    }),
  ];
}

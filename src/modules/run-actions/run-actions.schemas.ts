import { PageQuery } from '../../http/pagination';
import { RUN_STATUSES } from '../../engine/statuses';
import { RUN_ACTION_KINDS, RUN_ACTION_OUTCOMES, RUN_ACTION_STATUSES } from '../../contracts/run-action-contract';
import { z } from '../../zod';

/** Most runs one action may match (its `limit`). */
export const MAX_RUN_ACTION_LIMIT = 10_000;
/** Most runs one selection may name (`filter.run_ids`). */
const MAX_RUN_IDS = 1000;

/**
 * Which runs of the caller's workspace an action acts on: every field given must hold. Strict: a
 * misspelt field would otherwise be dropped and the action match every run.
 */
export const RunActionFilter = z
  .strictObject({
    run_ids: z
      .array(z.string().min(1).max(200))
      .min(1)
      .max(MAX_RUN_IDS)
      .optional()
      .openapi({ description: `These runs only (a selection, as the console makes one), at most ${MAX_RUN_IDS}` }),
    workflow_id: z.string().min(1).max(200).optional(),
    status: z.array(z.enum(RUN_STATUSES)).min(1).max(RUN_STATUSES.length).optional(),
    run_type: z.string().min(1).max(100).optional(),
    started_after: z.iso.datetime({ offset: true }).optional().openapi({ description: 'Runs started at or after' }),
    started_before: z.iso.datetime({ offset: true }).optional().openapi({ description: 'Runs started before' }),
    error_contains: z
      .string()
      .min(1)
      .max(500)
      .optional()
      .openapi({ description: "Text in the run's message (its error), ignoring case" }),
    node_id: z.string().min(1).max(200).optional().openapi({
      description:
        'rerun: the node to rerun from (required). Every other action: only runs whose open pause is at this node',
    }),
  })
  .openapi('RunActionFilter');

export const RunActionRequest = z
  .strictObject({
    filter: RunActionFilter,
    action: z.enum(RUN_ACTION_KINDS).openapi({
      description:
        "cancel: cancel each open run; retry: a new run of each ended run with its inputs and version; rerun: rerun each ended run from `filter.node_id`; approve, decline: decide each run's open pause as the caller (its approvers must include them)",
    }),
    dry_run: z
      .boolean()
      .default(false)
      .openapi({ description: 'Answer the matches only; act on nothing, store nothing' }),
    limit: z
      .number()
      .int()
      .min(1)
      .max(MAX_RUN_ACTION_LIMIT)
      .default(1000)
      .openapi({
        description: `Most runs matched (oldest first), at most ${MAX_RUN_ACTION_LIMIT}; the matches are fixed when the action is made`,
      }),
  })
  .superRefine((body, ctx) => {
    if (body.action === 'rerun' && body.filter.node_id === undefined)
      ctx.addIssue({ code: 'custom', path: ['filter', 'node_id'], message: 'rerun needs the node to rerun from' });
  })
  .openapi('RunActionRequest');
export type RunActionBody = z.output<typeof RunActionRequest>;

export const RunActionIdParams = z.object({ action_id: z.string().min(1).max(50) });

export const RunActionResultsQuery = PageQuery;

export const RunActionResult = z
  .object({
    run_id: z.string(),
    outcome: z.enum(RUN_ACTION_OUTCOMES),
    new_run_id: z.string().nullable().openapi({ description: "A retry's or rerun's new run" }),
    error: z.string().nullable().openapi({ description: 'Why the run failed, or why it was skipped' }),
  })
  .openapi('RunActionResult');

export const RunActionResponse = z
  .object({
    id: z.string().nullable().openapi({ description: '`RA…`; null for a dry run, which stores nothing' }),
    action: z.enum(RUN_ACTION_KINDS),
    matched: z.number().int(),
    status: z.enum([...RUN_ACTION_STATUSES, 'DRY_RUN']),
    done: z.number().int().openapi({ description: 'Runs acted on, or with nothing to do (skipped)' }),
    failed: z.number().int(),
    created_at: z.string().nullable(),
    ended_at: z.string().nullable(),
    results: z
      .array(RunActionResult)
      .openapi({ description: 'One page of the matched runs, in order (page, page_size)' }),
  })
  .openapi('RunActionResponse');
export type RunActionAnswer = z.output<typeof RunActionResponse>;

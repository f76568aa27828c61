import { PageQuery } from '../../http/pagination';
import { SCHEDULE_OVERLAPS, SCHEDULE_VERSIONS } from '../../contracts/schedule-contract';
import { RUN_STATUSES } from '../../engine/statuses';
import { withoutReservedKey } from '../../runs/values';
import { z } from '../../zod';
import { CallbackRequest, CallbackShown } from '../callbacks/callbacks.schemas';
import { cronProblem } from './cron';

const JsonObject = z.record(z.string(), z.unknown());

/** Whether the runtime (and so Temporal, which shares the IANA database) knows the zone. */
export function isTimeZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

const Cron = z
  .string()
  .max(200)
  .superRefine((value, ctx) => {
    const problem = cronProblem(value);
    if (problem) ctx.addIssue({ code: 'custom', message: `not a cron expression: ${problem}` });
  })
  .openapi({ description: 'Five fields (minute hour day-of-month month day-of-week), or @hourly, @daily, @weekly…' });

/** Temporal's scheduler is not made for sub-10-second intervals; nor are runs with a record each. */
export const MIN_INTERVAL_SECONDS = 10;

/**
 * The fields of a schedule a client sets; which of cron and interval is set is checked on the
 * whole. Strict (these routes are Spur's own): an unknown field is a 422 naming it, not ignored.
 */
const ScheduleFields = z.strictObject({
  cron: Cron.nullable(),
  interval_seconds: z
    .number()
    .int()
    .min(MIN_INTERVAL_SECONDS)
    .max(366 * 24 * 3600)
    .nullable(),
  timezone: z
    .string()
    .max(100)
    .refine(isTimeZone, 'not an IANA time zone name (e.g. Europe/Berlin)')
    .openapi({ description: 'IANA time zone the cron fields are read in' }),
  initial_inputs: withoutReservedKey(z.record(z.string(), JsonObject)).openapi({
    description: "Every run's initial_inputs, as start_run takes them",
  }),
  overlap: z.enum(SCHEDULE_OVERLAPS).openapi({
    description:
      'A fire while the previous run goes on: skip it, keep one (or all) to start after, cancel the running one, or start anyway',
  }),
  catchup_window_seconds: z
    .number()
    .int()
    .min(10)
    .max(366 * 24 * 3600)
    .openapi({
      description: 'Fires missed during an outage (of Temporal or every worker) are started late if within this window',
    }),
  paused: z.boolean(),
  version: z.enum(SCHEDULE_VERSIONS).openapi({
    description:
      'latest: each run takes the workflow as it is when it fires; pinned: the version saved with the schedule',
  }),
  note: z.string().max(1000).nullable(),
  callback: CallbackRequest.nullable().openapi({
    description:
      "Every run the schedule starts posts its events here, as a start_run callback does (the secret is stored sealed and never shown). On PUT, left out keeps the schedule's callback; null removes it.",
  }),
});

const exactlyOneTiming = (body: { cron?: string | null; interval_seconds?: number | null }, ctx: z.RefinementCtx) => {
  const given = [body.cron != null, body.interval_seconds != null].filter(Boolean).length;
  if (given !== 1)
    ctx.addIssue({
      code: 'custom',
      path: ['cron'],
      message: given === 0 ? 'set cron or interval_seconds' : 'set cron or interval_seconds, not both',
    });
};

export const ScheduleRequest = z
  .strictObject({
    cron: ScheduleFields.shape.cron.optional(),
    interval_seconds: ScheduleFields.shape.interval_seconds.optional(),
    timezone: ScheduleFields.shape.timezone.default('UTC'),
    initial_inputs: ScheduleFields.shape.initial_inputs,
    overlap: ScheduleFields.shape.overlap.default('skip'),
    catchup_window_seconds: ScheduleFields.shape.catchup_window_seconds.default(60),
    paused: ScheduleFields.shape.paused.default(false),
    version: ScheduleFields.shape.version.default('latest'),
    note: ScheduleFields.shape.note.optional(),
    callback: ScheduleFields.shape.callback.optional(),
  })
  .superRefine(exactlyOneTiming)
  .openapi('ScheduleRequest');
export type ScheduleInput = z.output<typeof ScheduleRequest>;

/** Any of the fields; setting cron clears interval_seconds and the other way round. */
export const ScheduleUpdateRequest = ScheduleFields.partial()
  .superRefine((body, ctx) => {
    if (body.cron != null && body.interval_seconds != null) exactlyOneTiming(body, ctx);
  })
  .openapi('ScheduleUpdateRequest');
export type ScheduleUpdate = z.output<typeof ScheduleUpdateRequest>;

export const BackfillRequest = z
  .strictObject({ start_time: z.iso.datetime({ offset: true }), end_time: z.iso.datetime({ offset: true }) })
  .superRefine((body, ctx) => {
    if (Date.parse(body.end_time) <= Date.parse(body.start_time))
      ctx.addIssue({ code: 'custom', path: ['end_time'], message: 'end_time must be after start_time' });
  })
  .openapi('ScheduleBackfillRequest');
export type BackfillInput = z.output<typeof BackfillRequest>;

export const ScheduleResponse = z
  .object({
    id: z.string(),
    workflow_id: z.string(),
    cron: z.string().nullable(),
    interval_seconds: z.number().int().nullable(),
    timezone: z.string(),
    initial_inputs: z.record(z.string(), JsonObject),
    overlap: z.enum(SCHEDULE_OVERLAPS),
    catchup_window_seconds: z.number().int(),
    paused: z.boolean(),
    version: z.enum(SCHEDULE_VERSIONS),
    pinned_version_id: z.string().nullable(),
    note: z.string().nullable(),
    callback: CallbackShown.nullable().openapi({ description: "The runs' callback, without its secret" }),
    next_run_times: z
      .array(z.iso.datetime())
      .openapi({ description: 'The next fire times (up to 5; none while paused)' }),
    recent_runs: z
      .array(
        z.object({ run_id: z.string(), scheduled_time: z.iso.datetime().nullable(), status: z.enum(RUN_STATUSES) }),
      )
      .openapi({ description: 'The latest runs it started, newest first (up to 10)' }),
    skipped_fires: z
      .array(z.object({ scheduled_time: z.iso.datetime(), reason: z.string(), skipped_at: z.iso.datetime() }))
      .openapi({
        description: 'The latest fires that started no run because the workflow was paused, newest first (up to 10)',
      }),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .openapi('ScheduleResponse');
export type ScheduleResponse = z.input<typeof ScheduleResponse>;

export const BackfillResponse = z
  .object({ schedule_id: z.string(), start_time: z.iso.datetime(), end_time: z.iso.datetime() })
  .openapi('ScheduleBackfillResponse');

export const ScheduleListQuery = PageQuery.extend({ workflow_id: z.string().max(200).optional() });
export const ScheduleIdParams = z.object({ schedule_id: z.string().min(1).max(200) });

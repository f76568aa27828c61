import { trusted } from 'mongoose';
import { isDuplicateKeyError } from './ids';
import type { Models, ScheduleSkipDoc } from './models';

/** How many of a schedule's skipped fires are kept: its answer shows them, newest first. */
export const KEPT_SKIPS = 10;

export interface ScheduleSkip {
  scheduledTime: Date;
  reason: string;
  skippedAt: Date;
}

/**
 * The one writer of skipped fires: a fire that found its workflow paused records that it started
 * nothing and why (once per fire, by its key), and only a schedule's latest KEPT_SKIPS are kept, so
 * a schedule that fires every few seconds through a long pause stays small.
 */
export function createScheduleSkips(models: Models) {
  const { ScheduleSkip: Skip } = models;

  async function recent(scheduleId: string, limit = KEPT_SKIPS): Promise<ScheduleSkip[]> {
    const docs = await Skip.find({ schedule_id: scheduleId })
      .sort({ scheduled_time: -1 })
      .limit(limit)
      .lean<ScheduleSkipDoc[]>();
    return docs.map((d) => ({ scheduledTime: d.scheduled_time, reason: d.reason, skippedAt: d.skipped_at }));
  }

  return {
    recent,

    async record(scheduleId: string, fireKey: string, scheduledTime: Date, reason: string): Promise<void> {
      try {
        await Skip.create({
          _id: fireKey,
          schedule_id: scheduleId,
          scheduled_time: scheduledTime,
          reason,
          skipped_at: new Date(),
        });
      } catch (err) {
        if (!isDuplicateKeyError(err)) throw err; // a retried fire recorded it already
      }
      const kept = await Skip.find({ schedule_id: scheduleId }, { _id: 1 })
        .sort({ scheduled_time: -1 })
        .skip(KEPT_SKIPS)
        .lean<Array<{ _id: string }>>();
      // Built here from stored ids; trusted() keeps sanitizeFilter from neutralising it.
      if (kept.length > 0) await Skip.deleteMany({ _id: trusted({ $in: kept.map((d) => d._id) }) });
    },

    async removeOfSchedule(scheduleId: string): Promise<void> {
      await Skip.deleteMany({ schedule_id: scheduleId });
    },
  };
}

export type ScheduleSkips = ReturnType<typeof createScheduleSkips>;

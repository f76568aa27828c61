import { randomUUID } from 'node:crypto';
import { isDuplicateKeyError } from './ids';
import type { Models } from './models';

/** A fire sends its run's insert within this long of opening its recording, or records nothing (and is retried). */
export const RECORD_WITHIN_MS = 10_000;
/**
 * How long a delete waits for recordings it sees open. Longer than RECORD_WITHIN_MS by the time an
 * insert sent at the last moment may take; measured on the deleter's clock from when it first saw
 * them (after they opened), so no two processes' clocks are compared.
 */
const DRAIN_MS = 2 * RECORD_WITHIN_MS;
const DRAIN_POLL_MS = 50;

const closingId = (scheduleId: string) => `closing:${scheduleId}`;

export interface FireRecording {
  /** Throws once the recording is too old to insert its run: the delete may no longer be waiting for it. */
  assertInTime(): void;
  end(): Promise<void>;
}

/**
 * Keeps a schedule's delete and its fires' recordings apart without transactions (FerretDB v1 has
 * none): a fire first writes that it is recording, then reads whether the schedule is closing; a
 * delete first writes that it is closing, then reads the recordings under way and waits for them.
 * Each side writes before it reads, so at least one sees the other: either the fire records
 * nothing, or the delete answers only after the fire's run exists (and a workflow's delete then
 * removes it with the workflow's other runs). Either way no run appears after the delete's answer.
 */
export function createScheduleFires(models: Models, clock: () => number = Date.now) {
  const { ScheduleFire } = models;

  return {
    /** Opens the recording of one fire of a schedule; null when the schedule is closing (record nothing). */
    async begin(scheduleId: string, fireKey: string): Promise<FireRecording | null> {
      const id = `${fireKey}:${randomUUID()}`;
      const opened = clock();
      await ScheduleFire.create({ _id: id, schedule_id: scheduleId, closing: false, created_at: new Date(opened) });
      const end = async () => {
        await ScheduleFire.deleteOne({ _id: id });
      };
      if (await ScheduleFire.exists({ _id: closingId(scheduleId) })) {
        await end();
        return null;
      }
      return {
        assertInTime() {
          if (clock() - opened > RECORD_WITHIN_MS)
            throw new Error(
              `recording a fire of ${scheduleId} took over ${RECORD_WITHIN_MS} ms: the run is not inserted`,
            );
        },
        end,
      };
    },

    /** From this write on no fire of the schedule records a run. Repeatable (a delete tried again). */
    async close(scheduleId: string): Promise<void> {
      try {
        await ScheduleFire.create({
          _id: closingId(scheduleId),
          schedule_id: scheduleId,
          closing: true,
          created_at: new Date(clock()),
        });
      } catch (err) {
        if (!isDuplicateKeyError(err)) throw err;
      }
    },

    /**
     * Waits until the recordings opened before `close` have ended (their runs inserted, or not),
     * or could no longer insert one. A recording whose worker died is waited for DRAIN_MS once.
     */
    async drain(scheduleId: string): Promise<void> {
      const deadline = clock() + DRAIN_MS;
      while (clock() < deadline) {
        if (!(await ScheduleFire.exists({ schedule_id: scheduleId, closing: false }))) return;
        await new Promise((r) => setTimeout(r, DRAIN_POLL_MS));
      }
    },

    /** Once the schedule's document is gone: a fire finds no schedule and records nothing. */
    async forget(scheduleId: string): Promise<void> {
      await ScheduleFire.deleteMany({ schedule_id: scheduleId });
    },
  };
}

export type ScheduleFires = ReturnType<typeof createScheduleFires>;

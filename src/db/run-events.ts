import { trusted } from 'mongoose';
import { EMPTY_HEAD, type EventHead, type ProjectionChange, type RunEvent, type RunEventName, deriveEvents } from '../engine/run-events';
import { insertIgnoringDuplicates } from './ids';
import { fromJsonText, toJsonText } from './json-text';
import type { Models, RunEventDoc } from './models';

export type { RunEvent };

/** Most events read at once by a reader catching up (each an `_id` lookup, run in parallel); windows start at 4 and double. */
const READ_WINDOW = 32;

const eventId = (runId: string, seq: number) => `${runId}:${seq}`;

/**
 * A run's event stream in storage. Appends come after the projection write they describe, derived
 * from it and the head (what the stream said so far), with the head saved last: a retried write
 * derives the same events under the same numbers, the unique `(run_id, seq)` (and `_id`) turns
 * the ones already stored into no-ops, so nothing is skipped and nothing doubled.
 */
export function createRunEvents(models: Models) {
  const { RunEvent, RunEventHead } = models;

  function toDocs(runId: string, events: RunEvent[], at: Date): RunEventDoc[] {
    return events.map((e) => ({ _id: eventId(runId, e.seq), run_id: runId, seq: e.seq, event: e.event, data: toJsonText(e.data), at }));
  }

  return {
    async append(runId: string, change: ProjectionChange): Promise<void> {
      const doc = await RunEventHead.findById(runId).lean<{ head: string }>();
      const head = fromJsonText<EventHead>(doc?.head) ?? EMPTY_HEAD;
      const derived = deriveEvents(runId, head, change);
      if (derived.events.length === 0 && JSON.stringify(derived.head) === JSON.stringify(head)) return;
      await insertIgnoringDuplicates(RunEvent, toDocs(runId, derived.events, new Date()));
      await RunEventHead.replaceOne({ _id: runId }, { _id: runId, head: toJsonText(derived.head) }, { upsert: true });
    },

    /**
     * Runs recorded once, already ended (a batch's inline rows): their status and final event,
     * no head (nothing writes them again).
     */
    async appendEnded(rows: Array<{ runId: string; change: ProjectionChange }>): Promise<void> {
      const at = new Date();
      const docs = rows.flatMap((r) => toDocs(r.runId, deriveEvents(r.runId, EMPTY_HEAD, r.change).events, at));
      await insertIgnoringDuplicates(RunEvent, docs);
    },

    /**
     * The events after `afterSeq`, in order, at most `limit`: stops at the first not (yet) written.
     * One `_id` lookup when there is none (a watcher's idle poll), then windows of lookups.
     */
    async after(runId: string, afterSeq: number, limit = 256): Promise<StoredRunEvent[]> {
      const first = await RunEvent.findById(eventId(runId, afterSeq + 1)).lean<RunEventDoc>();
      if (!first) return [];
      const out: StoredRunEvent[] = [stored(first)];
      // A write adds a few events: small windows first, so a live reader does not look up 32 ids to find 3.
      for (let window = 4; out.length < limit; window = Math.min(READ_WINDOW, window * 2)) {
        const from = afterSeq + out.length + 1;
        const ids = Array.from({ length: Math.min(window, limit - out.length) }, (_, i) => eventId(runId, from + i));
        const docs = await Promise.all(ids.map((id) => RunEvent.findById(id).lean<RunEventDoc>()));
        for (const d of docs) {
          if (!d) return out;
          out.push(stored(d));
        }
      }
      return out;
    },

    /** Whether the run's stream has ever been written (a first event, or a head). */
    async exists(runId: string): Promise<boolean> {
      const [first, head] = await Promise.all([RunEvent.exists({ _id: eventId(runId, 1) }), RunEventHead.exists({ _id: runId })]);
      return first !== null || head !== null;
    },

    /** With their runs (a workflow's delete). */
    async removeOfRuns(runIds: string[]): Promise<void> {
      if (runIds.length === 0) return;
      await RunEvent.deleteMany({ run_id: trusted({ $in: runIds }) });
      await RunEventHead.deleteMany({ _id: trusted({ $in: runIds }) });
    },
  };
}

function stored(d: RunEventDoc): StoredRunEvent {
  return { seq: d.seq, event: d.event as RunEventName, data: d.data, at: d.at };
}

/** An event as stored: `data` is its JSON text, sent as it is. */
export interface StoredRunEvent {
  seq: number;
  event: RunEventName;
  data: string;
  at: Date;
}

export type RunEvents = ReturnType<typeof createRunEvents>;

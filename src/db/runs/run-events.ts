import { trusted } from 'mongoose';
import {
  EMPTY_HEAD,
  type EventHead,
  type ProjectionChange,
  type RunEvent,
  type RunEventName,
  deriveEvents,
} from '../../engine/run-events';
import { insertIgnoringDuplicates } from '../ids';
import { fromJsonText, toJsonText } from '../json-text';
import type { Models, RunEventDoc } from '../models';

export type { RunEvent };

/** Most events read at once by a reader catching up (each an `_id` lookup, run in parallel); windows start at 4 and double. */
const READ_WINDOW = 32;

const eventId = (runId: string, seq: number) => `${runId}:${seq}`;

/** The head fields of a run document (read by the caller that reads the run anyway, or here). */
export interface StoredHead {
  event_head?: string | null;
  event_head_before?: string | null;
}

/** The projection that reads a run's head fields. */
export const HEAD_FIELDS = { event_head: 1, event_head_before: 1 } as const;

/** A write that finds the head moved this many times in a row gives up (a bug, not a race). */
const MAX_HEAD_RACES = 20;

/**
 * What an append did, and the run's head after it (null: unknown). `moved`: only with `stored`,
 * another writer changed the head since; nothing was written.
 */
export interface Appended {
  outcome: 'written' | 'moved' | 'gone';
  head: string | null;
}

/** Fields of the run document to set in the same update as the head (a projection write). */
export type RunFields = Record<string, unknown>;

export interface AppendOptions {
  fields?: RunFields | null;
  stored?: StoredHead | null;
  onRunUpdated?: () => void;
}

/**
 * A run's event stream in storage. The head (what the stream has said so far) lives on the run
 * document and is saved in the same update as the write it describes; the events that write adds
 * are inserted right after it, so a reader of the stream never sees an event before the record
 * says it. The head before the write is kept beside it: a write retried after a crash between the
 * update and the insert finds its own head already saved, derives its events again from the head
 * before, and inserts them; the unique `_id` (`<run>:<seq>`) turns those already stored into
 * no-ops, so nothing is skipped and nothing doubled. Each write is one update and one insert.
 */
export function createRunEvents(models: Models) {
  const { Run, RunEvent } = models;

  function toDocs(runId: string, events: RunEvent[], at: Date): RunEventDoc[] {
    return events.map((e) => ({
      _id: eventId(runId, e.seq),
      run_id: runId,
      seq: e.seq,
      event: e.event,
      data: toJsonText(e.data),
      at,
    }));
  }

  /** One try of `append` on the head as `current` holds it: only while the run's head is still that one. */
  async function appendAt(
    runId: string,
    change: ProjectionChange,
    current: StoredHead,
    fields: RunFields | null,
    onRunUpdated: (() => void) | undefined,
  ): Promise<Appended> {
    const stored = current.event_head ?? null;
    const head = fromJsonText<EventHead>(stored) ?? EMPTY_HEAD;
    const derived = deriveEvents(runId, head, change);
    const headText = toJsonText(head);
    // null also matches a run never written (its head is stored as null).
    const unmoved = { _id: runId, event_head: stored };
    if (derived.events.length > 0 || toJsonText(derived.head) !== headText) {
      const next = toJsonText(derived.head);
      const saved = await Run.updateOne(unmoved, {
        $set: { ...fields, event_head: next, event_head_before: headText },
      });
      if (saved.matchedCount === 0) return movedOrGone(runId);
      if (fields) onRunUpdated?.();
      await insertIgnoringDuplicates(RunEvent, toDocs(runId, derived.events, new Date()));
      return { outcome: 'written', head: next };
    }
    if (fields) {
      if ((await Run.updateOne(unmoved, { $set: fields })).matchedCount === 0) return movedOrGone(runId);
      onRunUpdated?.();
    }
    // Nothing new: this may be the retry of the write that saved this head. Its events, again.
    const before = fromJsonText<EventHead>(current.event_head_before);
    if (before) {
      const again = deriveEvents(runId, before, change);
      if (again.events.length > 0 && toJsonText(again.head) === headText)
        await insertIgnoringDuplicates(RunEvent, toDocs(runId, again.events, new Date()));
    }
    return { outcome: 'written', head: stored };
  }

  /** An update matched nothing: the run was deleted (its workflow's delete), or another writer moved its head. */
  async function movedOrGone(runId: string): Promise<Appended> {
    return (await Run.exists({ _id: runId })) ? { outcome: 'moved', head: null } : { outcome: 'gone', head: null };
  }

  return {
    /**
     * Saves `fields` on the run together with the head after `change`, then the events `change`
     * adds, only on the head the events were derived from. `stored`: the run's head fields as the
     * caller knows them (it has just read the run, or it wrote them last); then `moved` says another
     * writer changed the head since, nothing was written, and the caller, whose `fields` were decided
     * on what it knew, reads again. Without `stored` the head is read here, and read again when it
     * moved. `onRunUpdated`: called once `fields` are written. The head after the write comes back.
     */
    async append(
      runId: string,
      change: ProjectionChange,
      { fields = null, stored, onRunUpdated }: AppendOptions = {},
    ): Promise<Appended> {
      for (let attempt = 1; ; attempt++) {
        const current = stored !== undefined ? stored : await Run.findById(runId, HEAD_FIELDS).lean<StoredHead>();
        if (!current) return { outcome: 'gone', head: null };
        const appended = await appendAt(runId, change, current, fields, onRunUpdated);
        if (appended.outcome !== 'moved' || stored !== undefined) return appended;
        if (attempt >= MAX_HEAD_RACES) throw new Error(`Run ${runId}: its event head moved under ${attempt} writes`);
      }
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
      const [first, run] = await Promise.all([
        RunEvent.exists({ _id: eventId(runId, 1) }),
        Run.findById(runId, { event_head: 1 }).lean<StoredHead>(),
      ]);
      return first !== null || typeof run?.event_head === 'string';
    },

    /**
     * Whether the events of the run's last write are all stored. A write updates the run first and
     * inserts its events after: a run whose record has just ended may still be adding its final
     * ones, and a deletion in between would leave them behind. A run with no head has none pending.
     */
    async lastWriteStored(runId: string): Promise<boolean> {
      const run = await Run.findById(runId, HEAD_FIELDS).lean<StoredHead>();
      const head = fromJsonText<EventHead>(run?.event_head ?? null);
      if (!head) return true;
      const from = (fromJsonText<EventHead>(run?.event_head_before ?? null)?.seq ?? 0) + 1;
      const ids = Array.from({ length: Math.max(0, head.seq - from + 1) }, (_, i) => eventId(runId, from + i));
      if (ids.length === 0) return true;
      return (await RunEvent.countDocuments({ _id: trusted({ $in: ids }) })) === ids.length;
    },

    /** With their runs (a workflow's delete). */
    async removeOfRuns(runIds: string[]): Promise<void> {
      if (runIds.length === 0) return;
      await RunEvent.deleteMany({ run_id: trusted({ $in: runIds }) });
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

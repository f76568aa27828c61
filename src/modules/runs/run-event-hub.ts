import type { RunEvents, StoredRunEvent } from '../../db/runs/run-events';
import type { TaskDelta, TaskDeltas } from '../../db/runs/task-deltas';
import { FINAL_EVENTS } from '../../engine/run-events';
import type { Logger } from '../../logger';

/** Where one client's events go (an SSE response). */
export interface EventSink {
  /** False: the client is behind; wait for `drained()` before the next one. */
  send(event: StoredRunEvent): boolean;
  /** A piece of a running task's streamed text (not an event of the stream: no sequence number). */
  delta(nodeId: string, text: string): void;
  drained(): Promise<void>;
  comment(text: string): void;
  /** The stream is over (its final event sent, or its run deleted). */
  end(): void;
}

export interface HubOptions {
  /** How often a run's watcher looks for its next event. */
  pollMs: number;
  keepAliveMs: number;
  /** Whether a run still exists (a run deleted mid-stream ends its streams). */
  runExists(runId: string): Promise<boolean>;
  /** Where running tasks' streamed text is (absent: no `task.delta`). */
  deltas?: Pick<TaskDeltas, 'ofRun'>;
  logger?: Logger;
}

/** Events a watcher keeps for its subscribers; one further behind reads storage itself. */
const RECENT = 512;
/** A watcher that has found nothing for this long checks that its run still exists. */
const EXISTS_CHECK_MS = 10_000;
const MAX_BACKOFF_MS = 5000;

interface Subscriber {
  next: number;
  sink: EventSink;
  pumping: boolean;
  closed: boolean;
}

/**
 * The api process's run watchers: one per run that has subscribers, polling storage for the
 * run's next event (one `_id` lookup per tick, FerretDB having no change streams) and fanning what
 * it finds out to every subscriber, so a thousand streams of one run cost one lookup per tick. A
 * subscriber that falls behind the watcher's recent events (a slow client, a replay) reads them
 * from storage itself. The watcher stops with its last subscriber. While the database is away a
 * watcher retries with backoff and its streams stay open (keep-alives go on).
 *
 * Each tick also reads the run's streamed text pieces (few: they are kept only seconds) and sends
 * the new ones, before the tick's events, to the streams that are up to date: a task's pieces are
 * stored before its end is, so they reach a live stream before its `task.completed`. What was
 * stored before the watcher's first look is not sent (a reconnect gets the task's output instead).
 */
export function createRunEventHub(events: Pick<RunEvents, 'after'>, opts: HubOptions) {
  const watchers = new Map<string, RunWatcher>();

  class RunWatcher {
    readonly subs = new Set<Subscriber>();
    next: number;
    recent: StoredRunEvent[] = [];
    finalSeq: number | null = null;
    private timer: NodeJS.Timeout | undefined;
    private polling = false;
    private failures = 0;
    private idleSince = Date.now();
    /** Ids of the pieces seen (null until the first look, which only notes what is there already). */
    private seenDeltas: Set<string> | null = null;

    constructor(
      readonly runId: string,
      from: number,
    ) {
      this.next = from;
    }

    schedule(ms: number): void {
      if (this.timer || this.polling || this.finalSeq !== null || this.subs.size === 0) return;
      this.timer = setTimeout(() => {
        this.timer = undefined;
        void this.poll();
      }, ms);
    }

    stop(): void {
      clearTimeout(this.timer);
      this.timer = undefined;
    }

    private async poll(): Promise<void> {
      this.polling = true;
      let found: StoredRunEvent[];
      let fresh: TaskDelta[];
      try {
        found = await events.after(this.runId, this.next - 1);
        // After the events: a task end found above has its every piece stored by now.
        fresh = await this.newDeltas();
        if (found.length === 0 && Date.now() - this.idleSince > EXISTS_CHECK_MS) {
          this.idleSince = Date.now();
          if (!(await opts.runExists(this.runId))) return this.gone();
        }
        this.failures = 0;
      } catch (err) {
        this.failures++;
        opts.logger?.warn({ err, runId: this.runId }, 'run events: storage unreachable, retrying');
        this.polling = false;
        this.schedule(Math.min(MAX_BACKOFF_MS, opts.pollMs * 2 ** this.failures));
        return;
      } finally {
        this.polling = false;
      }
      // `recent` stays contiguous: it only ever grows by the events that follow it.
      found = found.filter((e, i) => e.seq === this.next + i);
      for (const sub of this.subs)
        if (!sub.closed && sub.next === this.next) for (const d of fresh) sub.sink.delta(d.nodeId, d.text);
      if (found.length > 0) {
        this.idleSince = Date.now();
        this.recent.push(...found);
        if (this.recent.length > RECENT) this.recent.splice(0, this.recent.length - RECENT);
        this.next += found.length;
        const last = found.at(-1) as StoredRunEvent;
        if (FINAL_EVENTS.includes(last.event)) this.finalSeq = last.seq;
        for (const sub of this.subs) void pump(this, sub);
      }
      this.schedule(found.length > 0 ? 0 : opts.pollMs);
    }

    private async newDeltas(): Promise<TaskDelta[]> {
      if (!opts.deltas) return [];
      const all = await opts.deltas.ofRun(this.runId);
      const seen = this.seenDeltas;
      this.seenDeltas = new Set(all.map((d) => d.id));
      return seen ? all.filter((d) => !seen.has(d.id)) : [];
    }

    private gone(): void {
      for (const sub of this.subs) close(this, sub);
    }
  }

  /** Sends a subscriber what it has not had yet, in order; ends it after the final event. */
  async function pump(w: RunWatcher, sub: Subscriber): Promise<void> {
    if (sub.pumping) return;
    sub.pumping = true;
    try {
      while (!sub.closed && sub.next < w.next) {
        const start = w.recent[0]?.seq ?? w.next;
        const batch =
          sub.next >= start
            ? w.recent.slice(sub.next - start)
            : await events.after(w.runId, sub.next - 1, Math.min(start - sub.next, 256));
        // Nothing in order to send (storage behind the watcher): the next poll pumps again.
        if (batch[0]?.seq !== sub.next) break;
        for (const event of batch) {
          if (sub.closed || event.seq !== sub.next) break;
          const more = sub.sink.send(event);
          sub.next++;
          if (FINAL_EVENTS.includes(event.event)) return close(w, sub);
          if (!more) await sub.sink.drained();
        }
      }
      if (w.finalSeq !== null && sub.next > w.finalSeq) close(w, sub);
    } catch (err) {
      // Storage away during a catch-up: the next poll that finds something pumps again.
      opts.logger?.warn({ err, runId: w.runId }, 'run events: catch-up read failed');
    } finally {
      sub.pumping = false;
    }
  }

  function close(w: RunWatcher, sub: Subscriber): void {
    if (sub.closed) return;
    sub.closed = true;
    sub.sink.end();
    w.subs.delete(sub);
    if (w.subs.size === 0) {
      w.stop();
      watchers.delete(w.runId);
    }
  }

  const keepAlive = setInterval(() => {
    for (const w of watchers.values()) for (const sub of w.subs) if (!sub.pumping) sub.sink.comment('keep-alive');
  }, opts.keepAliveMs);
  keepAlive.unref();

  return {
    /** Streams the run's events after `afterSeq` to `sink`; the returned function unsubscribes (a client gone). */
    subscribe(runId: string, afterSeq: number, sink: EventSink): () => void {
      let w = watchers.get(runId);
      if (!w) {
        w = new RunWatcher(runId, afterSeq + 1);
        watchers.set(runId, w);
      }
      const watcher = w;
      const sub: Subscriber = { next: afterSeq + 1, sink, pumping: false, closed: false };
      watcher.subs.add(sub);
      void pump(watcher, sub);
      watcher.schedule(0);
      return () => close(watcher, sub);
    },

    /** How many runs are watched and streams open (for tests and the bench). */
    stats(): { watchers: number; streams: number } {
      let streams = 0;
      for (const w of watchers.values()) streams += w.subs.size;
      return { watchers: watchers.size, streams };
    },

    close(): void {
      clearInterval(keepAlive);
      for (const w of [...watchers.values()]) for (const sub of [...w.subs]) close(w, sub);
    },
  };
}

export type RunEventHub = ReturnType<typeof createRunEventHub>;

import { retriesStorageWrite, storageFailureKind } from '../../src/db/failure-kinds';
import type { RowRecordBase } from '../../src/db/runs/run-repository';
import type { RunStatus } from '../../src/engine/statuses';
import type { NodeOutput } from '../../src/engine/run-contract';
import type { RowOutcome } from '../../src/contracts/batch-contract';
import type { RowRun } from './batch-row';

/** A row's output line: its outputs, or its error and run id. */
export function rowOutcome(r: {
  runId: string;
  status: RunStatus;
  message: string | null;
  outputsById: Record<string, NodeOutput>;
}): RowOutcome {
  return r.status === 'COMPLETED'
    ? { ok: true, outputsById: r.outputsById }
    : { ok: false, error: r.message ?? r.status, runId: r.runId };
}

/** A row of the chunk that ended, waiting for its record. */
export interface EndedRow {
  /** Index within the chunk. */
  index: number;
  run: RowRun;
  initialInputs: Record<string, unknown>;
}

export type ChunkOutcome = RowOutcome | 'canceled' | undefined;

export interface ChunkFlusherDeps {
  insertEnded(base: RowRecordBase, rows: EndedRow[]): Promise<void>;
  /** Output lines of ended rows, with their full values (large ones are read back from their refs). */
  lines(outcomes: RowOutcome[]): Promise<string[]>;
  appendLines(outputFileId: string, lines: string[], opts: { part: number }): Promise<void>;
  saveProgress(done: number, failed: number): Promise<void>;
  heartbeat(details: { linesWritten: number }): void;
}

export interface ChunkPlace {
  base: RowRecordBase;
  outputFileId: string;
  /** The chunk's first row in the dataset. */
  start: number;
  /** Rows of the batch that ended before this chunk. */
  before: { ok: number; failed: number };
}

/**
 * What an inline chunk shows as it goes: every tick it heartbeats (whatever happened to the last
 * write, so a database outage never looks like a dead worker and never lets a retried attempt run
 * beside this one), records the rows that ended, appends the output lines of recorded rows now
 * contiguous from the front, and saves the parent's progress. A failed flush keeps its rows for the
 * next one; a row whose record cannot be stored at all fails alone.
 */
export class ChunkFlusher {
  private unsaved: EndedRow[] = [];
  private readonly saved: boolean[] = [];
  private chain: Promise<void> = Promise.resolve();
  private ticker: NodeJS.Timeout | undefined;
  private progressSaved: { done: number; failed: number } | undefined;

  constructor(
    private readonly deps: ChunkFlusherDeps,
    private readonly place: ChunkPlace,
    private readonly outcomes: ChunkOutcome[],
    private readonly count: { ok: number; failed: number },
    private linesNext: number,
  ) {
    // Rows an earlier attempt recorded are saved already.
    outcomes.forEach((o, i) => (this.saved[i] = o !== undefined));
  }

  rowEnded(row: EndedRow): void {
    this.unsaved.push(row);
  }

  start(everyMs: number): void {
    this.ticker = setInterval(() => {
      this.deps.heartbeat({ linesWritten: this.place.start + this.linesNext });
      void this.flush().catch(() => undefined); // the rows wait for the next tick
    }, everyMs);
  }

  /** The last flush, retried until it lands (the ticker keeps heartbeating meanwhile); then stops the ticker. */
  async finish(signal: AbortSignal): Promise<void> {
    try {
      for (let attempt = 1; ; attempt++) {
        try {
          return await this.flush();
        } catch (err) {
          // While the database is away it tries on; anything else (the output file deleted meanwhile)
          // a few times (failure-kinds.ts), and so does a cancelled chunk: its rows are re-run by
          // whoever runs the chunk again.
          if (!retriesStorageWrite(err, attempt) || (signal.aborted && attempt >= 3)) throw err;
          await new Promise((r) => setTimeout(r, Math.min(250 * 2 ** attempt, 5000)));
        }
      }
    } finally {
      clearInterval(this.ticker);
    }
  }

  /** One flush after the one before it, whether that one landed or not. */
  flush(): Promise<void> {
    const next = this.chain.catch(() => undefined).then(() => this.flushOnce());
    this.chain = next;
    return next;
  }

  private async flushOnce(): Promise<void> {
    const taken = this.unsaved;
    this.unsaved = [];
    try {
      await this.record(taken);
    } catch (err) {
      this.unsaved = taken.concat(this.unsaved);
      throw err;
    }
    let next = this.linesNext;
    const ready: RowOutcome[] = [];
    for (let o = this.outcomes[next]; o && o !== 'canceled' && this.saved[next]; o = this.outcomes[++next])
      ready.push(o);
    const lines = ready.length > 0 ? await this.deps.lines(ready) : [];
    if (lines.length > 0)
      await this.deps.appendLines(this.place.outputFileId, lines, { part: this.place.start + this.linesNext });
    this.linesNext = next;
    const { before } = this.place;
    const done = before.ok + before.failed + this.count.ok + this.count.failed;
    const failed = before.failed + this.count.failed;
    // A tick while nothing ended (the rows of the last tick are still being stored) saves nothing:
    // a progress save is a run read and update (the counts with the stream's head).
    if (this.progressSaved?.done === done && this.progressSaved.failed === failed) return;
    await this.deps.saveProgress(done, failed);
    this.progressSaved = { done, failed };
  }

  private async record(rows: EndedRow[]): Promise<void> {
    try {
      await this.deps.insertEnded(this.place.base, rows);
      for (const row of rows) this.saved[row.index] = true;
    } catch (err) {
      if (storageFailureKind(err) !== 'rejected') throw err; // the next flush tries again
      if (rows.length === 1) return this.recordPoisoned(rows[0] as EndedRow, err);
      // One row's record cannot be stored (too large, invalid): find it, keep the others.
      for (const row of rows) await this.record([row]);
    }
  }

  /** The row fails with a message saying why its record could not be stored; the chunk goes on. */
  private async recordPoisoned(row: EndedRow, err: unknown): Promise<void> {
    const run: RowRun = {
      ...row.run,
      status: 'FAILED',
      tasks: [],
      outputsById: {},
      outputsByTitle: {},
      message: `The row's run record could not be stored: ${(err as Error).message}`,
    };
    await this.deps.insertEnded(this.place.base, [{ ...row, run, initialInputs: {} }]);
    const previous = this.outcomes[row.index];
    if (previous && previous !== 'canceled') this.count[previous.ok ? 'ok' : 'failed']--;
    this.outcomes[row.index] = rowOutcome(run);
    this.count.failed++;
    this.saved[row.index] = true;
  }
}

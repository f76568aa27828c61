import { randomUUID } from 'node:crypto';
import type { TaskDeltas } from '../../src/db/runs/task-deltas';

/** Pieces of streamed text are written at most this often: one write per batch, not per token. */
export const DELTA_BATCH_MS = 150;

export interface DeltaBatcher {
  push(text: string): void;
  /**
   * The call ended: writes what is pending and waits for every write (the task's end must follow its
   * last piece). A reply that came whole within its first batch is not written at all: the task's
   * end, recorded next, carries it, and no watcher could have seen it sooner than one batch later.
   */
  flush(): Promise<void>;
}

/**
 * Collects a task's streamed text and stores it in batches (`run_task_deltas`), in order. A
 * failed write loses its piece (live text only; the task's output is what counts) and is logged.
 */
export function createDeltaBatcher(
  deltas: TaskDeltas,
  runId: string,
  nodeId: string,
  onError: (err: unknown) => void,
): DeltaBatcher {
  const stream = randomUUID().slice(0, 8);
  let pending = '';
  let seq = 0;
  let timer: NodeJS.Timeout | undefined;
  let writes: Promise<void> = Promise.resolve();

  function write(): Promise<void> {
    clearTimeout(timer);
    timer = undefined;
    if (pending) {
      const text = pending;
      const n = ++seq;
      pending = '';
      writes = writes.then(() => deltas.append(runId, nodeId, stream, n, text)).catch(onError);
    }
    return writes;
  }

  return {
    push(text) {
      pending += text;
      timer ??= setTimeout(() => void write(), DELTA_BATCH_MS);
    },
    flush() {
      if (seq === 0) {
        clearTimeout(timer);
        timer = undefined;
        pending = '';
      }
      return write();
    },
  };
}

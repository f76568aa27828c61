import { abortError } from './python-runner';

const HEARTBEAT_WHILE_WAITING_MS = 1000;

/**
 * At most `size` Python sandboxes of one worker run at once; the rest wait in order, heartbeating
 * so the activity is not timed out while queued, and stop waiting when the activity is cancelled.
 * A batch of a thousand rows then holds `size` processes, not a thousand.
 */
export class SandboxSlots {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(readonly size: number) {}

  /** Resolves with the slot's release once one is free. */
  async acquire(signal: AbortSignal, heartbeat: () => void): Promise<() => void> {
    if (signal.aborted) throw abortError(signal);
    if (this.running < this.size) return this.take();
    return new Promise((resolve, reject) => {
      const beat = setInterval(() => {
        try {
          heartbeat();
        } catch {
          // Cancellation arrives through the signal.
        }
      }, HEARTBEAT_WHILE_WAITING_MS);
      const granted = () => {
        clearInterval(beat);
        signal.removeEventListener('abort', onAbort);
        resolve(this.take());
      };
      const onAbort = () => {
        clearInterval(beat);
        const at = this.waiting.indexOf(granted);
        if (at >= 0) this.waiting.splice(at, 1);
        reject(abortError(signal));
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(granted);
    });
  }

  /** Sandboxes running now and places free (spur_sandbox_slots). */
  states(): { busy: number; free: number } {
    return { busy: this.running, free: Math.max(0, this.size - this.running) };
  }

  private take(): () => void {
    this.running++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.running--;
      this.waiting.shift()?.();
    };
  }
}

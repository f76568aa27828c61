import { LimitError } from './values.js';

/**
 * How far one render may go. Constants, not settings: a prompt, a URL or a chunk that needs more
 * is a template bug, and the limits exist so that one template cannot hold a thread or the
 * memory of the api or the worker.
 */

/** Time for one render, checked as it runs (every loop turn and expression). */
export const RENDER_TIME_LIMIT_MS = 1000;
/**
 * Characters of output, counted as they are written. Large enough for a prompt that fills the
 * largest model contexts (2M tokens is about 8 MB of text); every other use is far smaller.
 */
export const MAX_OUTPUT_CHARS = 8 * 1024 * 1024;
/** Items one `range()` may make; Jinja's sandbox uses the same bound. */
export const MAX_RANGE_ITEMS = 100_000;
/** Nested macro calls, so that a recursive macro stops with a message, not a stack overflow. */
export const MAX_CALL_DEPTH = 100;

export const timeLimitMessage = (limitMs = RENDER_TIME_LIMIT_MS) =>
  `the render took longer than the time limit of ${limitMs / 1000} s`;

/** The running render's clock and call depth; `tick` is called at every step. */
export class Budget {
  private steps = 0;
  private depth = 0;
  private readonly deadline: number;
  constructor(private readonly timeLimitMs = RENDER_TIME_LIMIT_MS) {
    this.deadline = Date.now() + timeLimitMs;
  }

  tick(): void {
    // Reading the clock every 1024 steps keeps the check cheap and still well inside the limit.
    if ((++this.steps & 1023) === 0 && Date.now() > this.deadline) {
      throw new LimitError(timeLimitMessage(this.timeLimitMs));
    }
  }

  enterCall(): void {
    if (++this.depth > MAX_CALL_DEPTH)
      throw new LimitError(`macros called each other more than ${MAX_CALL_DEPTH} deep`);
  }

  leaveCall(): void {
    this.depth--;
  }
}

const outputLimit = () =>
  new LimitError(`the output is longer than the limit of ${MAX_OUTPUT_CHARS} characters (8 MiB)`);

/** Output being written: the body of the template, a macro, a `{% set %}` block or a filter block. */
export class Output {
  private readonly parts: string[] = [];
  private length = 0;

  write(text: string): void {
    this.length += text.length;
    if (this.length > MAX_OUTPUT_CHARS) throw outputLimit();
    this.parts.push(text);
  }

  toString(): string {
    return this.parts.join('');
  }
}

/**
 * A string an operation built (`~`, `+`, a filter, a method) may not grow past the output limit:
 * doubling a string a few dozen times would otherwise fill the memory before anything is written.
 * A longer input passed through unchanged or shortened is fine.
 */
export function checkGrowth(result: unknown, inputs: readonly unknown[]): void {
  if (typeof result !== 'string' || result.length <= MAX_OUTPUT_CHARS) return;
  const longest = Math.max(0, ...inputs.map((v) => (typeof v === 'string' ? v.length : 0)));
  if (result.length > longest) throw outputLimit();
}

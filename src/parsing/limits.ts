import type { ParseLimits } from '../config/settings';

/** A file went past a parse limit: a 413 for an upload, a failed document in an ingest job. */
export class ParseLimitError extends Error {
  override name = 'ParseLimitError';
}

export function formatBytes(bytes: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${bytes} bytes` : `${Number(value.toFixed(1))} ${units[unit]}`;
}

export const bytesLimit = (maxBytes: number) => `the limit of ${formatBytes(maxBytes)} (SPUR_PARSE_MAX_BYTES)`;
export const timeLimitMessage = (fileName: string, limits: ParseLimits) =>
  `${fileName}: parsing took longer than the limit of ${limits.timeLimitMs / 1000} s (SPUR_PARSE_TIMEOUT_SECONDS)`;
export const memoryLimitMessage = (fileName: string, limits: ParseLimits) =>
  `${fileName}: parsing needed more than the memory limit of ${limits.memoryMb} MB (SPUR_PARSE_MEMORY_MB)`;

/**
 * Bytes a parse may still produce of one kind (decompressed, or extracted). Once over, every
 * later `take` throws the same error, so a library that catches one (PDF.js does) still cannot
 * go on, and the caller finds the error again at the end (`check`).
 */
export class ByteBudget {
  private over: ParseLimitError | undefined;

  constructor(
    private readonly limit: number,
    /** Says what went over: "report.pdf: its PDF streams decompress to more than …". */
    private readonly describe: (limit: string) => string,
    private spent = 0,
  ) {}

  take(bytes: number): void {
    this.spent += bytes;
    if (!this.over && this.spent > this.limit) this.over = new ParseLimitError(this.describe(bytesLimit(this.limit)));
    if (this.over) throw this.over;
  }

  /** Throws when the budget was exceeded at any point, even if the error was caught on the way. */
  check(): void {
    if (this.over) throw this.over;
  }

  used(): number {
    return this.spent;
  }
}

import { z } from 'zod';

/**
 * An integer query parameter parsed as pydantic does: only an optionally signed run of digits
 * counts (`''`, `1e2`, `0x10`, `1.5` are `int_parsing` errors), absent means the default.
 */
export function queryInt(bounds: { min?: number; max?: number; default: number }) {
  let inner = z.number().int();
  if (bounds.min !== undefined) inner = inner.min(bounds.min);
  if (bounds.max !== undefined) inner = inner.max(bounds.max);
  return z.preprocess((v) => (typeof v === 'string' ? (/^\s*[-+]?\d+\s*$/.test(v) ? Number(v) : Number.NaN) : v), inner.default(bounds.default));
}

/** The spec's paging bounds: page ≥ 1 (default 1), 1 ≤ page_size ≤ 100 (default 10). */
export const PageQuery = z.object({
  page: queryInt({ min: 1, default: 1 }),
  page_size: queryInt({ min: 1, max: 100, default: 10 }),
});
export type Page = z.output<typeof PageQuery>;

export function pageBounds(page: Page): { skip: number; limit: number } {
  return { skip: (page.page - 1) * page.page_size, limit: page.page_size };
}

import { z } from 'zod';

/**
 * An integer query parameter parsed as pydantic does: only an optionally signed run of digits
 * counts (`''`, `1e2`, `0x10`, `1.5` are `int_parsing` errors), absent means the default.
 */
export function queryInt(bounds: { min?: number; max?: number; default: number }) {
  let inner = z.number().int();
  if (bounds.min !== undefined) inner = inner.min(bounds.min);
  if (bounds.max !== undefined) inner = inner.max(bounds.max);
  return z.preprocess(
    (v) => (typeof v === 'string' ? (/^\s*[-+]?\d+\s*$/.test(v) ? Number(v) : Number.NaN) : v),
    inner.default(bounds.default),
  );
}

function pageQuery(size: { max: number; default: number }) {
  return z.object({
    page: queryInt({ min: 1, default: 1 }),
    page_size: queryInt({ min: 1, max: size.max, default: size.default }),
  });
}

/** The spec's paging bounds: page ≥ 1 (default 1), 1 ≤ page_size ≤ 100 (default 10). */
export const PageQuery = pageQuery({ max: 100, default: 10 });

/** Most items one answer of a listing that PySpur answers whole may hold. */
export const WHOLE_LIST_PAGE_MAX = 1000;

/**
 * Paging of a listing PySpur answers whole (datasets, output files, files, collections…): a
 * request without paging gets the whole list up to `max` items, so PySpur's clients see what
 * they expect on any installation of up to that size; beyond it they page (`page`, `page_size`
 * as on the spec's paged routes), and a `page_size` over `max` is refused (422), so no request
 * makes the api build an unbounded answer.
 */
export function wholeListQuery(max: number = WHOLE_LIST_PAGE_MAX) {
  return pageQuery({ max, default: max });
}
export const WholeListQuery = wholeListQuery();

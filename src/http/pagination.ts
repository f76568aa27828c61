import { z } from 'zod';

/** The spec's paging bounds: page ≥ 1 (default 1), 1 ≤ page_size ≤ 100 (default 10). */
export const PageQuery = z.object({
  page: z.coerce.number().int().min(1).default(1),
  page_size: z.coerce.number().int().min(1).max(100).default(10),
});
export type Page = z.output<typeof PageQuery>;

export function pageBounds(page: Page): { skip: number; limit: number } {
  return { skip: (page.page - 1) * page.page_size, limit: page.page_size };
}

/** A page of a listing as clients ask for it (PySpur's `page` ≥ 1 and `page_size`). */
export interface Page {
  page: number;
  page_size: number;
}

/** The skip and limit that read exactly one page from the database. */
export function pageBounds(page: Page): { skip: number; limit: number } {
  return { skip: (page.page - 1) * page.page_size, limit: page.page_size };
}

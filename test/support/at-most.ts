/**
 * Calls `each` on every item, at most `limit` calls at a time: a test's independent cases (one run
 * or request per payload) overlap their waits on the api, the worker and Temporal instead of adding
 * them up one after another, without sending them all at once.
 */
export async function eachAtMost<T>(
  items: readonly T[],
  limit: number,
  each: (item: T) => Promise<void>,
): Promise<void> {
  const queue = [...items];
  const lane = async () => {
    for (let item = queue.shift(); item !== undefined; item = queue.shift()) await each(item);
  };
  await Promise.all(Array.from({ length: Math.min(limit, queue.length) }, lane));
}

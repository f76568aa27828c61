/**
 * Runs `work` on every item, at most `limit` at a time, in the items' order. For a burst of database
 * commands: a connection pool opens a connection for each command that finds none free, and every
 * connection opened costs the client and the server a handshake.
 */
export async function eachAtMost<T>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) await work(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
}

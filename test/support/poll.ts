/**
 * The waits between a test's polls: 50 ms at first, growing by half each time up to 500 ms. What
 * happens at once is seen at once; a long wait (a restart, a retry's backoff) costs two requests a
 * second instead of twenty, which on a 2-core machine is CPU the servers under test get back.
 */
export function pollDelays(): () => Promise<void> {
  let next = 50;
  return () => {
    const wait = next;
    next = Math.min(next * 1.5, 500);
    return new Promise((r) => setTimeout(r, wait));
  };
}

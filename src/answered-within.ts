/**
 * `promise`'s answer, or `fallback` when it fails or takes longer than `ms`: for a look that must
 * not hold up what waits on it (a read asking Temporal, a health check flushing). The promise
 * itself goes on.
 */
export function answeredWithin<T>(promise: Promise<T>, ms: number, fallback: T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<T>((resolve) => {
    timer = setTimeout(() => resolve(fallback), ms);
  });
  return Promise.race([promise.catch(() => fallback), late]).finally(() => clearTimeout(timer));
}

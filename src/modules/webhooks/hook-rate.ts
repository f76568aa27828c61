/**
 * A trigger's rate as fixed windows: `rate` requests per second is `allowed` per `windowMs`. A rate
 * of 1 or more counts per second (2.5 lets 2 through); below 1 the window is long enough for one
 * request (0.2: one per 5 s). Fixed windows let up to twice the rate through across a boundary.
 */
export function rateWindow(ratePerSecond: number, nowMs: number) {
  const windowMs = ratePerSecond >= 1 ? 1000 : Math.ceil(1 / ratePerSecond) * 1000;
  const allowed = Math.max(1, Math.floor((ratePerSecond * windowMs) / 1000));
  const start = Math.floor(nowMs / windowMs) * windowMs;
  return { start, windowMs, allowed, retryAfterSeconds: Math.max(1, Math.ceil((start + windowMs - nowMs) / 1000)) };
}

/** Seconds as people read them: 850 ms, 12.3 s, 4 min 10 s, 2 h 5 min. */
export function duration(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds)) return '—';
  if (seconds < 1) return `${Math.round(seconds * 1000)} ms`;
  if (seconds < 60) return `${seconds.toFixed(1)} s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ${Math.round(seconds % 60)} s`;
  return `${Math.floor(seconds / 3600)} h ${Math.round((seconds % 3600) / 60)} min`;
}

/** USD with enough digits for small model costs; a dash when no price is known. */
export function usd(value: number | null | undefined): string {
  if (value === null || value === undefined) return '—';
  if (value === 0) return '$0';
  return value < 0.01 ? `$${value.toPrecision(3)}` : `$${value.toFixed(2)}`;
}

/** A time in the viewer's zone, to the second. */
export function when(iso: string | null | undefined): string {
  if (!iso) return '—';
  const date = new Date(/[zZ]|[+-]\d\d:\d\d$/.test(iso) ? iso : `${iso}Z`);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString();
}

/** Milliseconds since the epoch of an API time (PySpur's times carry no zone: they are UTC). */
export function epochMs(iso: string | null | undefined): number | null {
  if (!iso) return null;
  const ms = Date.parse(/[zZ]|[+-]\d\d:\d\d$/.test(iso) ? iso : `${iso}Z`);
  return Number.isNaN(ms) ? null : ms;
}

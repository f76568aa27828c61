/** A benchmark knob from the environment: a whole number ≥ `min` (0 unless said), or the default. */
export function intEnv(name: string, fallback: number, min = 0): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min) throw new Error(`${name}=${raw} is not a whole number ≥ ${min}`);
  return n;
}

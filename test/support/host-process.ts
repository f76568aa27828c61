import { readFileSync } from 'node:fs';

/** Gone, or a zombie nobody reaped (PID 1 here does not reap orphans): either way it no longer runs. */
export function processEnded(pid: number): boolean {
  try {
    return /^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return true;
  }
}

import { readFileSync, readdirSync } from 'node:fs';

/** Gone, or a zombie nobody reaped (PID 1 here does not reap orphans): either way it no longer runs. */
export function processEnded(pid: number): boolean {
  try {
    return /^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return true;
  }
}

/** A /proc file's text, or '' when its process (or thread) ended while we looked. */
export function procText(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

/** The children of a live process (listed per thread by the kernel); none once it is gone. */
export function childrenOf(pid: number): number[] {
  let threads: string[];
  try {
    threads = readdirSync(`/proc/${pid}/task`);
  } catch {
    return []; // the process is gone
  }
  return threads.flatMap((tid) => procText(`/proc/${pid}/task/${tid}/children`).split(' ').filter(Boolean).map(Number));
}

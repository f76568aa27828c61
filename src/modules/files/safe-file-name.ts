/**
 * A stored file name can never address anything but its own entry: directories, `..`, NUL and
 * control characters are dropped, and the length is capped. The result is only ever a GridFS
 * filename, never a path on disk.
 */
export function safeFileName(original: string): string {
  const base = original.split(/[\\/]/).pop() ?? '';
  const cleaned = base
    .replace(/[\u0000-\u001f\u007f]/g, '')
    .replace(/^\.+/, '')
    .trim()
    .slice(-200);
  return cleaned === '' ? 'file' : cleaned;
}

/** `YYYYMMDD_HHMMSS` in server local time, the prefix PySpur gives uploaded test files. */
export function uploadStamp(now: Date): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `${now.getFullYear()}${p(now.getMonth() + 1)}${p(now.getDate())}_${p(now.getHours())}${p(now.getMinutes())}${p(now.getSeconds())}`;
}

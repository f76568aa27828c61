/**
 * How long a server asked us to wait before trying again: `retry-after-ms` (OpenAI's), else
 * `Retry-After` in seconds or as an HTTP date. Undefined when absent or unreadable. Every client of
 * an outside service (LLM and embedding providers, integrations, callback receivers) reads it here.
 */
export function retryAfterMs(headers: Pick<Headers, 'get'> | undefined): number | undefined {
  const ms = headers?.get('retry-after-ms')?.trim();
  if (ms && Number.isFinite(Number(ms)) && Number(ms) >= 0) return Number(ms);
  const after = headers?.get('retry-after')?.trim();
  if (!after) return undefined;
  const seconds = Number(after);
  if (Number.isFinite(seconds)) return seconds >= 0 ? seconds * 1000 : undefined;
  const date = Date.parse(after);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

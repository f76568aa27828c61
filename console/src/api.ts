/** An answer of the API that is not a success: its status and the API's own message. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** The API's message in an error body: FastAPI's `detail` (a string or a list of field errors), or `message`. */
function messageOf(status: number, body: unknown): string {
  if (body && typeof body === 'object') {
    const { detail, message } = body as { detail?: unknown; message?: unknown };
    if (typeof detail === 'string') return detail;
    if (Array.isArray(detail))
      return detail
        .map((d: { loc?: unknown[]; msg?: string }) => `${(d.loc ?? []).slice(1).join('.')}: ${d.msg ?? ''}`)
        .join('; ');
    if (typeof message === 'string') return message;
  }
  return `The API answered ${status}`;
}

/**
 * A call of the same REST API every client uses, with the browser's session. A session that has
 * ended sends the browser to the sign-in page, which brings it back here.
 */
export async function api<T>(path: string, init: { method?: string; body?: unknown } = {}): Promise<T> {
  const res = await fetch(`/api${path}`, {
    method: init.method ?? 'GET',
    credentials: 'same-origin',
    headers: init.body === undefined ? {} : { 'content-type': 'application/json' },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
  });
  const text = await res.text();
  const body: unknown = text ? JSON.parse(text) : null;
  if (res.status === 401) {
    location.assign(`/login?next=${encodeURIComponent(location.pathname + location.search)}`);
    throw new ApiError(401, 'Signed out');
  }
  if (!res.ok) throw new ApiError(res.status, messageOf(res.status, body));
  return body as T;
}

/** A query string of the set values. */
export function query(params: Record<string, string | number | undefined>): string {
  const set = Object.entries(params).filter(([, v]) => v !== undefined && v !== '');
  return set.length === 0 ? '' : `?${new URLSearchParams(set.map(([k, v]) => [k, String(v)])).toString()}`;
}

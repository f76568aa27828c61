export interface Reply<T = unknown> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export type JsonBody = Record<string, unknown> | unknown[] | string | number | boolean | null;

/**
 * A tiny HTTP client over fetch: JSON in, parsed JSON (or text) out, never throws on a status.
 * `defaultHeaders` go with every request (an API key).
 */
export function client(baseUrl: string, defaultHeaders: Record<string, string> = {}) {
  async function request<T = any>(
    method: string,
    path: string,
    body?: JsonBody | FormData | { raw: string },
    headers: Record<string, string> = {},
  ): Promise<Reply<T>> {
    const init: RequestInit = { method, headers: { ...defaultHeaders, ...headers }, redirect: 'manual' };
    if (body instanceof FormData) init.body = body;
    else if (body && typeof body === 'object' && 'raw' in body && Object.keys(body).length === 1) {
      init.body = (body as { raw: string }).raw;
      (init.headers as Record<string, string>)['content-type'] ??= 'application/json';
    } else if (body !== undefined) {
      init.body = JSON.stringify(body);
      (init.headers as Record<string, string>)['content-type'] = 'application/json';
    }
    let res: Response;
    try {
      res = await fetch(`${baseUrl}${path}`, init);
    } catch (err) {
      // fetch says only "fetch failed": the cause (a reset, a refused connection) is what tells why.
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      throw new Error(`${method} ${path}: ${(err as Error).message} (${cause?.code ?? ''} ${cause?.message ?? ''})`, {
        cause: err,
      });
    }
    const text = await res.text();
    let parsed: unknown = text;
    // JSON, not JSON Lines (application/x-ndjson), which a test reads from `text`.
    if (/^application\/(.+\+)?json\b/.test(res.headers.get('content-type') ?? '') && text) parsed = JSON.parse(text);
    return { status: res.status, headers: res.headers, body: parsed as T, text };
  }
  return {
    request,
    get: <T = any>(path: string) => request<T>('GET', path),
    post: <T = any>(path: string, body?: JsonBody | FormData | { raw: string }) => request<T>('POST', path, body),
    put: <T = any>(path: string, body?: JsonBody | { raw: string }) => request<T>('PUT', path, body),
    delete: <T = any>(path: string) => request<T>('DELETE', path),
  };
}

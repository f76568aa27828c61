import http from 'node:http';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { stack } from './stack';

/** A two-page stand-in for the web UI's export: enough for the login redirects. */
export function tinyWebUiExport(): string {
  const dir = mkdtempSync(path.join(stack.tmpDir, 'web-ui-login-'));
  mkdirSync(path.join(dir, '_next/static'), { recursive: true });
  writeFileSync(path.join(dir, 'index.html'), '<html>the ui</html>');
  writeFileSync(path.join(dir, 'dashboard.html'), '<html>dashboard</html>');
  writeFileSync(path.join(dir, '_next/static/app.js'), 'x');
  return dir;
}

export interface PlainReply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/**
 * One request on a fresh connection, optionally from another loopback address (`localAddress`
 * 127.0.0.2: all of 127.0.0.0/8 is loopback), which is how a test plays a second client address.
 */
export function plainRequest(
  origin: string,
  method: string,
  urlPath: string,
  options: { headers?: Record<string, string>; body?: string; localAddress?: string } = {},
): Promise<PlainReply> {
  const url = new URL(urlPath, origin);
  return new Promise((resolve, reject) => {
    const body = options.body === undefined ? undefined : Buffer.from(options.body, 'utf8');
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        path: `${url.pathname}${url.search}`,
        method,
        agent: false,
        headers: { ...(options.headers ?? {}), ...(body ? { 'content-length': String(body.length) } : {}) },
        ...(options.localAddress ? { localAddress: options.localAddress } : {}),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** POST /login with the form a browser sends, from this server's own origin unless `headers` say otherwise. */
export function postLogin(
  origin: string,
  apiKey: string,
  options: { headers?: Record<string, string>; localAddress?: string; next?: string } = {},
): Promise<PlainReply> {
  return plainRequest(origin, 'POST', '/login', {
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin, ...(options.headers ?? {}) },
    body: new URLSearchParams({ api_key: apiKey, next: options.next ?? '/dashboard' }).toString(),
    ...(options.localAddress ? { localAddress: options.localAddress } : {}),
  });
}

/** The `name=value` part of the reply's session cookie ('' when it set none). */
export function sessionCookieOf(reply: PlainReply): string {
  return (reply.headers['set-cookie'] ?? [])[0]?.split(';')[0] ?? '';
}

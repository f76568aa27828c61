import { type IncomingHttpHeaders, type IncomingMessage, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type FakeState, SERVICE_ROUTES, type ServiceName } from './fake-service-routes';

/**
 * One local HTTP server speaking the integrations' APIs: each service answers under its own path
 * prefix (`/github/repos/o/r`), so tests set `GITHUB_API_BASE=<url>/github` and the prefix rule of
 * the base URL is exercised too. Answers come from the route tables in fake-service-routes.ts;
 * `failNext` scripts an error answer; every request is recorded.
 */

export interface ServiceRequest {
  service: ServiceName;
  method: string;
  /** Path under the service prefix, without the query string. */
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  /** JSON, a form as an object, or text. */
  body: any;
  /** When the request arrived (ms since the epoch, this server's clock: the test's). */
  at: number;
  /** The status it was answered with; unset while unanswered (a hanging reply). */
  status?: number;
  /** Set when the client dropped the connection before an answer (a hanging reply). */
  abandoned?: boolean;
}

export interface FakeReply {
  status?: number;
  json?: unknown;
  text?: string;
  headers?: Record<string, string>;
  /** Never answer: the request waits until the client gives up (cancellation tests). */
  hang?: boolean;
}

export interface FakeServices {
  url: string;
  /** `<url>/<service>`: the value for the service's `_API_BASE` variable. */
  base(service: ServiceName): string;
  requests: ServiceRequest[];
  /** Requests to one service, optionally one method and path pattern. */
  to(service: ServiceName, method?: string, path?: RegExp): ServiceRequest[];
  /** The next request to `service` matching `path` gets `reply` instead of the table's answer. */
  failNext(service: ServiceName, path: RegExp, ...replies: FakeReply[]): void;
  state: FakeState;
  close(): Promise<void>;
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  if (!text) return undefined;
  if ((req.headers['content-type'] ?? '').includes('application/x-www-form-urlencoded'))
    return Object.fromEntries(new URLSearchParams(text));
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export async function startFakeServices(): Promise<FakeServices> {
  const requests: ServiceRequest[] = [];
  const scripted: { service: ServiceName; path: RegExp; reply: FakeReply }[] = [];
  const state: FakeState = { crawlCompleteAfterPolls: 2, crawls: new Map(), tokensIssued: 0 };

  const server = createServer((req, res) => {
    const at = Date.now();
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://fake');
      const [, prefix = '', ...rest] = url.pathname.split('/');
      const service = prefix as ServiceName;
      const body = await readBody(req);
      let reply: FakeReply = { status: 404, json: { message: `no fake service '${prefix}'` } };
      let recorded: ServiceRequest | undefined;
      if (Object.hasOwn(SERVICE_ROUTES, service)) {
        const request: ServiceRequest = {
          service,
          method: req.method ?? 'GET',
          path: `/${rest.join('/')}`,
          query: url.searchParams,
          headers: req.headers,
          body,
          at,
        };
        recorded = request;
        requests.push(request);
        const i = scripted.findIndex((s) => s.service === service && s.path.test(request.path));
        if (i >= 0) reply = scripted.splice(i, 1)[0]!.reply;
        else {
          const route = SERVICE_ROUTES[service].find((r) => r.method === request.method && r.path.test(request.path));
          reply = route
            ? route.reply(request, state, request.path.match(route.path)!)
            : { status: 404, json: { message: `no route ${request.method} ${request.path}` } };
        }
      }
      if (reply.hang) {
        if (recorded) res.on('close', () => (recorded.abandoned = true));
        return;
      }
      const text = reply.text ?? (reply.json === undefined ? '' : JSON.stringify(reply.json));
      const type = reply.text !== undefined ? 'text/plain; charset=utf-8' : 'application/json';
      if (recorded) recorded.status = reply.status ?? 200;
      res.writeHead(reply.status ?? 200, { ...(text ? { 'content-type': type } : {}), ...reply.headers });
      res.end(text);
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    base: (service) => `${url}/${service}`,
    requests,
    to: (service, method, path) =>
      requests.filter((r) => r.service === service && (!method || r.method === method) && (!path || path.test(r.path))),
    failNext: (service, path, ...replies) => void scripted.push(...replies.map((reply) => ({ service, path, reply }))),
    state,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve())));
    },
  };
}

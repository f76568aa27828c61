import http from 'node:http';
import https from 'node:https';
import { Readable, Transform, type TransformCallback, pipeline } from 'node:stream';
import zlib from 'node:zlib';
import { type Resolver, checkUrl, checkingLookup, hostPort, systemResolver, trustedHosts } from './checked-target';
import { OutboundLimitError, OutboundRefusedError } from './errors';
import { eventFrames } from './event-frames';
import { type OutboundKind, metrics } from '../metrics/metrics';

/** The operator's rules for every request the server makes on a workflow's or a caller's behalf. */
export interface OutboundPolicy {
  /** Loopback, private, link-local and similar addresses may be reached (SPUR_OUTBOUND_ALLOW_PRIVATE). */
  allowPrivate: boolean;
  /** Largest answer body, counted after decompression (SPUR_OUTBOUND_MAX_RESPONSE_BYTES). */
  maxResponseBytes: number;
  /** A connection that sends nothing for this long is cut (a trickling server cannot hold it forever). */
  idleTimeoutMs: number;
  /** Redirects followed, each hop checked like the first request. */
  maxRedirects: number;
  /**
   * `host:port` pairs the operator trusts whatever their address (an internal model gateway while
   * the rest of the private network stays closed: SPUR_OUTBOUND_ALLOW_HOSTS).
   */
  allowHosts: readonly string[];
}

/** The same contract as the global fetch, so SDKs (OpenAI, Anthropic) take it as their `fetch`. */
export type OutboundFetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/**
 * The client, and the same client as one kind of caller sees it: `as('callback')` shares its
 * connections and policy, and counts its requests as that kind in spur_outbound_requests_total
 * (the client itself counts as `other`).
 */
export type OutboundClient = OutboundFetch & { as(kind: OutboundKind): OutboundFetch };

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const NULL_BODY = new Set([101, 204, 205, 304]);
/** Headers that survive a redirect to another origin: none that could carry a credential. */
const CROSS_ORIGIN_SAFE = new Set(['accept', 'accept-language', 'content-language', 'content-type', 'user-agent']);

/**
 * The one client of every server-side request (integrations, LLM and embedding providers, AI
 * helpers, callbacks). Each connection's address comes from a lookup that checks it against the
 * policy, so what is checked is what is dialled (no DNS rebinding), and IP literals are checked
 * before any connection. Redirects are followed by hand, each hop checked again, and credentials
 * never follow a redirect to another origin. Answers are decompressed and capped as they stream,
 * server-sent events handed on whole (event-frames.ts).
 */
export function createOutboundFetch(policy: OutboundPolicy, resolve: Resolver = systemResolver): OutboundClient {
  const lookup = checkingLookup(policy.allowPrivate, resolve);
  const checked = {
    'http:': new http.Agent({ keepAlive: true, lookup }),
    'https:': new https.Agent({ keepAlive: true, lookup }),
  };
  const trusted = { 'http:': new http.Agent({ keepAlive: true }), 'https:': new https.Agent({ keepAlive: true }) };
  const allowHosts = trustedHosts(policy.allowHosts);
  const agentFor = (url: URL) => {
    const scheme = url.protocol as 'http:' | 'https:';
    return allowHosts.has(hostPort(url)) ? trusted[scheme] : checked[scheme];
  };

  const outboundFetch: OutboundFetch = async (input, init) => {
    const request = new Request(input, init);
    // The caller's own signal, not the copy on `request`: that copy follows the caller's through a
    // weak reference, so once `request` is collected (the answer is being read by then) an abort
    // no longer reaches the connection, and a cancelled call goes on reading.
    const signal = init?.signal ?? (input instanceof Request ? input.signal : undefined);
    let body = request.body ? Buffer.from(await request.arrayBuffer()) : undefined;
    let url = new URL(request.url);
    let method = request.method;
    let headers = Object.fromEntries(request.headers);
    for (let hop = 0; ; hop++) {
      checkUrl(url, policy.allowPrivate || allowHosts.has(hostPort(url)));
      const answer = await send(
        url,
        { method, headers, agent: agentFor(url), ...(signal ? { signal } : {}), timeout: policy.idleTimeoutMs },
        body,
      );
      const location = answer.headers.location;
      if (!REDIRECTS.has(answer.statusCode ?? 0) || !location || request.redirect === 'manual')
        return toResponse(answer, url, method, policy);
      answer.destroy();
      if (request.redirect === 'error')
        throw new TypeError(`${url.href} redirected, and the request does not follow redirects`);
      if (hop >= policy.maxRedirects)
        throw new OutboundRefusedError(`more than ${policy.maxRedirects} redirects from ${request.url}`);
      const next = new URL(location, url);
      if (next.origin !== url.origin)
        headers = Object.fromEntries(Object.entries(headers).filter(([name]) => CROSS_ORIGIN_SAFE.has(name)));
      if (
        answer.statusCode === 303 ||
        (method === 'POST' && (answer.statusCode === 301 || answer.statusCode === 302))
      ) {
        method = 'GET';
        body = undefined;
        delete headers['content-type'];
      }
      url = next;
    }
  };
  const counted =
    (kind: OutboundKind): OutboundFetch =>
    (input, init) =>
      countedRequest(kind, () => outboundFetch(input, init));
  return Object.assign(counted('other'), { as: counted });
}

/** One request into spur_outbound_requests_total, once its answer's status is known or it failed. */
async function countedRequest(kind: OutboundKind, request: () => Promise<Response>): Promise<Response> {
  try {
    const response = await request();
    metrics.outboundRequests.inc({ kind, outcome: response.status < 400 ? 'ok' : 'http_error' });
    return response;
  } catch (err) {
    metrics.outboundRequests.inc({ kind, outcome: err instanceof OutboundRefusedError ? 'refused' : 'failed' });
    throw err;
  }
}

/**
 * One request. A kept-alive connection the server closed as the request arrived (its idle timeout
 * passed the moment this client reused it) fails with ECONNRESET before any answer: the request
 * goes again, since the server never read it. Again on whichever connection the pool gives next —
 * a server that closes idle connections closes all it had at once, so the next may be as dead; each
 * try discards one, and a new connection's failure is the request's.
 */
function send(url: URL, options: http.RequestOptions, body: Buffer | undefined): Promise<http.IncomingMessage> {
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const headers = { ...options.headers, ...(body ? { 'content-length': String(body.length) } : {}) };
    const req = client.request(url, { ...options, headers });
    let answer: http.IncomingMessage | undefined;
    // The answer too fails with the reason: destroying the request alone leaves its reader "aborted".
    req.on('timeout', () => {
      const idle = new Error(`${url.host} sent nothing for ${Number(options.timeout) / 1000} s`);
      answer?.destroy(idle);
      req.destroy(idle);
    });
    req.on('error', (err: NodeJS.ErrnoException) => {
      if (req.reusedSocket && err.code === 'ECONNRESET') resolve(send(url, options, body));
      else reject(err);
    });
    req.on('response', (response: http.IncomingMessage) => resolve((answer = response)));
    req.end(body);
  });
}

function toResponse(answer: http.IncomingMessage, url: URL, method: string, policy: OutboundPolicy): Response {
  const status = answer.statusCode ?? 0;
  const headers = new Headers();
  for (let i = 0; i + 1 < answer.rawHeaders.length; i += 2)
    headers.append(answer.rawHeaders[i] as string, answer.rawHeaders[i + 1] as string);
  if (NULL_BODY.has(status) || method === 'HEAD') {
    answer.resume();
    return withUrl(new Response(null, { status, statusText: answer.statusMessage, headers }), url);
  }
  const decoder = decoderFor(headers.get('content-encoding'));
  if (decoder) {
    headers.delete('content-encoding');
    headers.delete('content-length');
  }
  const stages: NodeJS.ReadWriteStream[] = [
    ...(decoder ? [decoder] : []),
    byteCap(policy.maxResponseBytes),
    ...(isEventStream(headers) ? [eventFrames()] : []),
  ];
  const out = stages[stages.length - 1] as Transform;
  pipeline([answer, ...stages], () => undefined); // errors reach the reader through `out`
  const body = Readable.toWeb(out) as ReadableStream<Uint8Array>;
  return withUrl(new Response(body, { status, statusText: answer.statusMessage, headers }), url);
}

function isEventStream(headers: Headers): boolean {
  return headers.get('content-type')?.split(';')[0]?.trim().toLowerCase() === 'text/event-stream';
}

function decoderFor(encoding: string | null): Transform | undefined {
  switch (encoding?.trim().toLowerCase()) {
    case 'gzip':
    case 'x-gzip':
      return zlib.createGunzip();
    case 'deflate':
      return zlib.createInflate();
    case 'br':
      return zlib.createBrotliDecompress();
    default:
      return undefined;
  }
}

/** Passes bytes through until `max`, then fails: a decompression bomb stops at the cap too. */
function byteCap(max: number): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback) {
      seen += chunk.length;
      if (seen > max)
        callback(new OutboundLimitError(`the answer exceeded ${max} bytes (SPUR_OUTBOUND_MAX_RESPONSE_BYTES)`));
      else callback(null, chunk);
    },
  });
}

/** Response.url is read-only and empty for a constructed Response; SDKs read it in error messages. */
function withUrl(response: Response, url: URL): Response {
  Object.defineProperty(response, 'url', { value: url.href });
  return response;
}

import { type IncomingHttpHeaders, type IncomingMessage, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { anthropicInputUsage, openAiUsage, streamMessages } from './fake-llm-stream';
import { type FakeBatchApi, createFakeBatchApi } from './fake-batch-api';

/**
 * A local stand-in for LLM providers: a real HTTP server speaking OpenAI's chat-completions
 * protocol (also used by Gemini, DeepSeek, Ollama, xAI and Azure's deployment URLs) and
 * Anthropic's messages protocol. Tests point the providers' base-URL settings at it, script
 * replies with `enqueue`, and assert on the recorded requests. A request with `stream: true`
 * is answered with server-sent events in that protocol's streaming format.
 */

export type Protocol = 'openai' | 'anthropic';

export interface RecordedRequest {
  method: string;
  /** Path without the query string, e.g. `/v1/chat/completions`. */
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: any;
  protocol: Protocol | null;
  /** When the request arrived (ms since the epoch, this server's clock). */
  at: number;
  /** The status it was answered with, and when (set once answered). */
  answered?: { status: number; at: number };
  /** When its client closed the connection before an answer came (a call stopped in flight). */
  abandoned?: number;
}

export interface ScriptedResponse {
  status?: number;
  /** Sent as JSON (a string is sent as it is). Without it: a protocol reply or error body. */
  body?: unknown;
  /** The assistant text, wrapped in the reply format of the request's protocol. */
  content?: string;
  /** Tool calls the assistant makes (OpenAI `tool_calls`, Anthropic `tool_use` blocks). */
  toolCalls?: ScriptedToolCall[];
  /** Token counts reported in the reply (default 10 in, 10 out); `cached`: of `input`, read from the prompt cache. */
  usage?: ScriptedUsage;
  headers?: Record<string, string>;
  /** Wait this long before answering (to provoke client timeouts). */
  delayMs?: number;
  /**
   * A call held in flight until this settles, then answered (200). Meanwhile the headers and a
   * byte or two a second keep the connection busy, so no idle timeout ends it: only the client can.
   * A client gone by then gets nothing.
   */
  heldUntil?: Promise<unknown>;
  /** A streamed reply's content pieces (their concatenation is the content); default: the content in 3 pieces. */
  chunks?: string[];
  /** Pause between a streamed reply's chunks. */
  chunkDelayMs?: number;
  /**
   * A streamed reply sent whole in one write, its end included (one segment on loopback): the client
   * reads it in one go, however slow the host. Apart, each piece is its own write, and a client
   * descheduled between two reads sees them arrive far apart.
   */
  oneWrite?: boolean;
  /** A streamed reply waits for each gate's `open` once it has sent `afterChunks` content pieces. */
  gates?: { afterChunks: number; open: Promise<unknown> }[];
}

export interface ScriptedUsage {
  input: number;
  output: number;
  cached?: number;
}

export interface ScriptedToolCall {
  id: string;
  name: string;
  arguments: Record<string, unknown>;
}

/** Decides the reply to a request when nothing is enqueued (parallel requests arrive in any order). */
export type Responder = (request: RecordedRequest) => ScriptedResponse | undefined;

export interface FakeLlmServer {
  /** `http://127.0.0.1:<port>`, without a trailing slash. */
  url: string;
  requests: RecordedRequest[];
  /** Most model requests (protocol requests) it was answering at once, since it started. */
  readonly maxInFlight: number;
  enqueue(...responses: ScriptedResponse[]): void;
  /** Its batch APIs (OpenAI Batch, Anthropic Message Batches); each request answered as `respondWith` would online. */
  batches: FakeBatchApi;
  /** Replies by looking at the request, after the queue is empty; `undefined` restores the echo. */
  respondWith(responder: Responder | undefined): void;
  close(): Promise<void>;
}

function protocolOf(path: string): Protocol | null {
  // Any prefix: /v1 (OpenAI, Ollama), none (DeepSeek), /v1beta/openai (Gemini).
  if (path.endsWith('/chat/completions')) return 'openai';
  if (/^\/openai\/deployments\/[^/]+\/chat\/completions$/.test(path)) return 'openai';
  if (path === '/v1/messages') return 'anthropic';
  return null;
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((part) => (typeof part?.text === 'string' ? part.text : '')).join('');
  return '';
}

/** Default reply: a JSON object derived from the last user message, so tests can see what was sent. */
function echoContent(body: any): string {
  const users = Array.isArray(body?.messages) ? body.messages.filter((m: any) => m?.role === 'user') : [];
  return JSON.stringify({ output: `echo: ${textOf(users.at(-1)?.content)}` });
}

function replyBody(
  protocol: Protocol,
  model: string,
  content: string | null,
  scripted: ScriptedResponse | undefined,
): unknown {
  const calls = scripted?.toolCalls ?? [];
  const usage = scripted?.usage ?? { input: 10, output: 10 };
  if (protocol === 'anthropic') {
    const text = content === null ? [] : [{ type: 'text', text: content }];
    const tools = calls.map((c) => ({ type: 'tool_use', id: c.id, name: c.name, input: c.arguments }));
    return {
      id: 'msg_fake',
      type: 'message',
      role: 'assistant',
      model,
      content: [...text, ...tools],
      stop_reason: calls.length > 0 ? 'tool_use' : 'end_turn',
      stop_sequence: null,
      usage: { ...anthropicInputUsage(usage), output_tokens: usage.output },
    };
  }
  const toolCalls = calls.map((c) => ({
    id: c.id,
    type: 'function',
    function: { name: c.name, arguments: JSON.stringify(c.arguments) },
  }));
  const message = {
    role: 'assistant',
    content,
    refusal: null,
    ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
  };
  return {
    id: 'chatcmpl-fake',
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, message, finish_reason: toolCalls.length > 0 ? 'tool_calls' : 'stop', logprobs: null }],
    usage: openAiUsage(usage),
  };
}

function errorBody(protocol: Protocol | null, status: number): unknown {
  const message = `fake error ${status}`;
  if (protocol === 'anthropic')
    return { type: 'error', error: { type: status === 429 ? 'rate_limit_error' : 'api_error', message } };
  return {
    error: { message, type: status === 429 ? 'rate_limit_exceeded' : 'invalid_request_error', code: null, param: null },
  };
}

async function readBody(req: IncomingMessage): Promise<any> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return text;
  }
}

/** The most requests that were being answered at the same moment (from arrival and answer times). */
export function mostAtOnce(requests: readonly Pick<RecordedRequest, 'at' | 'answered'>[]): number {
  const edges = requests.flatMap((r) => [
    { at: r.at, step: 1 },
    { at: r.answered?.at ?? Number.POSITIVE_INFINITY, step: -1 },
  ]);
  // An answer and the next request at the same millisecond do not overlap.
  edges.sort((a, b) => a.at - b.at || a.step - b.step);
  let open = 0;
  let most = 0;
  for (const e of edges) most = Math.max(most, (open += e.step));
  return most;
}

export async function startFakeLlmServer(): Promise<FakeLlmServer> {
  const requests: RecordedRequest[] = [];
  const queue: ScriptedResponse[] = [];
  const timers = new Set<NodeJS.Timeout>();
  let responder: Responder | undefined;
  let inFlight = 0;
  let maxInFlight = 0;

  const stream = (res: ServerResponse, recorded: RecordedRequest, scripted: ScriptedResponse | undefined) => {
    const content =
      scripted?.chunks?.join('') ?? scripted?.content ?? (scripted?.toolCalls ? null : echoContent(recorded.body));
    const messages = streamMessages(
      recorded.protocol ?? 'openai',
      String(recorded.body?.model ?? 'deployment'),
      content,
      scripted,
    );
    if (!res.headersSent) res.writeHead(200, { 'content-type': 'text/event-stream', ...scripted?.headers });
    // The messages ahead of the first content piece: OpenAI's role chunk; Anthropic's message and block starts.
    const head = recorded.protocol === 'anthropic' ? 2 : 1;
    const gates = [...(scripted?.gates ?? [])].sort((a, b) => a.afterChunks - b.afterChunks);
    if (scripted?.oneWrite && gates.length === 0) {
      recorded.answered = { status: 200, at: Date.now() };
      return void res.end(messages.join(''));
    }
    let sent = 0;
    const next = () => {
      if (gates[0] && sent === gates[0].afterChunks + head)
        return void (gates.shift() as { open: Promise<unknown> }).open.then(next);
      const message = messages.shift();
      if (message === undefined || res.destroyed) {
        recorded.answered = { status: 200, at: Date.now() };
        return void res.end();
      }
      res.write(message);
      sent += 1;
      const timer = setTimeout(() => {
        timers.delete(timer);
        next();
      }, scripted?.chunkDelayMs ?? 0);
      timers.add(timer);
    };
    next();
  };

  const respond = (res: ServerResponse, recorded: RecordedRequest, scripted: ScriptedResponse | undefined) => {
    const protocol = recorded.protocol;
    const status = scripted?.status ?? (protocol ? 200 : 404);
    if (protocol && recorded.body?.stream === true && status < 400 && scripted?.body === undefined)
      return stream(res, recorded, scripted);
    let body = scripted?.body;
    if (body === undefined) {
      if (status >= 400 || !protocol) body = errorBody(protocol, status);
      else {
        const content = scripted?.content ?? (scripted?.toolCalls ? null : echoContent(recorded.body));
        body = replyBody(protocol, String(recorded.body?.model ?? 'deployment'), content, scripted);
      }
    }
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    recorded.answered = { status, at: Date.now() };
    if (!res.headersSent) res.writeHead(status, { 'content-type': 'application/json', ...scripted?.headers });
    res.end(text);
  };

  // A batch's request is answered as the same request online would be (the responder, else the echo).
  const batches = createFakeBatchApi((protocol, body, customId) => {
    const scripted = responder?.({
      method: 'POST',
      path: protocol === 'openai' ? '/v1/chat/completions' : '/v1/messages',
      query: new URLSearchParams({ custom_id: customId }),
      headers: {},
      body,
      protocol,
      at: Date.now(),
    });
    const status = scripted?.status ?? 200;
    if (status >= 400) return { ok: false, status, message: `fake error ${status}` };
    const content = scripted?.content ?? (scripted?.toolCalls ? null : echoContent(body));
    return {
      ok: true,
      body: scripted?.body ?? replyBody(protocol, String(body?.model ?? 'deployment'), content, scripted),
    };
  });

  const server = createServer((req, res) => {
    const at = Date.now();
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://fake');
      if (batches.handles(req.method ?? 'GET', url.pathname)) return batches.handle(req, res, url);
      const recorded: RecordedRequest = {
        at,
        method: req.method ?? 'GET',
        path: url.pathname,
        query: url.searchParams,
        headers: req.headers,
        body: await readBody(req),
        protocol: req.method === 'POST' ? protocolOf(url.pathname) : null,
      };
      requests.push(recorded);
      if (recorded.protocol) {
        inFlight++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        res.once('close', () => {
          inFlight--;
          if (!recorded.answered) recorded.abandoned = Date.now();
        });
      }
      const scripted = recorded.protocol ? (queue.shift() ?? responder?.(recorded)) : undefined;
      if (scripted?.heldUntil) {
        const streamed = recorded.body?.stream === true;
        res.writeHead(200, { 'content-type': streamed ? 'text/event-stream' : 'application/json' });
        // A space before JSON; an event stream's comment line.
        const drip = setInterval(() => res.write(streamed ? ':\n\n' : ' '), 1000);
        res.once('close', () => clearInterval(drip));
        await scripted.heldUntil;
        clearInterval(drip);
        if (res.destroyed) return;
      }
      if (!scripted?.delayMs) return respond(res, recorded, scripted);
      const timer = setTimeout(() => {
        timers.delete(timer);
        if (!res.destroyed) respond(res, recorded, scripted);
      }, scripted.delayMs);
      timers.add(timer);
    })();
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    get maxInFlight() {
      return maxInFlight;
    },
    enqueue: (...responses) => void queue.push(...responses),
    batches,
    respondWith: (next) => void (responder = next),
    close: async () => {
      for (const timer of timers) clearTimeout(timer);
      // The SDKs keep connections alive; without this `close` would wait for them to time out.
      server.closeAllConnections();
      await new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve())));
    },
  };
}

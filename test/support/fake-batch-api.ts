import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomBytes } from 'node:crypto';

/**
 * The batch APIs of the fake provider server (fake-llm-server.ts), speaking the real protocols:
 * OpenAI's Files + Batch API (`/v1/files`, `/v1/batches`, results as JSONL output and error
 * files) and Anthropic's Message Batches (`/v1/messages/batches`, results as JSONL). A batch's
 * state follows the providers' machines — OpenAI `validating → in_progress → completed` (or
 * `expired`), Anthropic `in_progress → ended` — by time, unless held. Each request is answered
 * as the online endpoint would (`answer`), so a failure of one request is that request's alone.
 */

export type BatchProtocol = 'openai' | 'anthropic';

/** How the fake answers one request of a batch: the online reply body, or an error. */
export type BatchLineAnswer = { ok: true; body: unknown } | { ok: false; status: number; message: string };

export interface FakeBatch {
  id: string;
  protocol: BatchProtocol;
  /** The requests as uploaded (custom_id and body). */
  requests: Array<{ custom_id: string; body: any }>;
  metadata: Record<string, string> | null;
  createdAt: number;
  /** Set by `expire`: the batch ends `expired`, these requests unanswered. */
  expired: boolean;
  /** How many times its state was asked for. */
  polls: number;
}

export interface FakeBatchApi {
  readonly batches: FakeBatch[];
  /** Keeps every batch in progress until `release()` (a wait the test controls). */
  hold(): void;
  release(): void;
  /** The next batches end `expired`: the requests whose custom ids `unanswered` names get no answer. */
  expireNext(unanswered: (customId: string) => boolean): void;
  handles(method: string, path: string): boolean;
  handle(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void>;
}

/** How long a new batch validates, and when it completes (ms after its creation), unless held. */
const VALIDATING_MS = 100;
const COMPLETES_AFTER_MS = 300;

const ROUTES = [
  /^\/v1\/files$/,
  /^\/v1\/files\/[^/]+\/content$/,
  /^\/v1\/batches$/,
  /^\/v1\/batches\/[^/]+$/,
  /^\/v1\/messages\/batches$/,
  /^\/v1\/messages\/batches\/[^/]+$/,
  /^\/v1\/messages\/batches\/[^/]+\/results$/,
];

export function createFakeBatchApi(
  answer: (protocol: BatchProtocol, body: any, customId: string) => BatchLineAnswer,
): FakeBatchApi {
  const batches: FakeBatch[] = [];
  const files = new Map<string, string>();
  let held = false;
  let expiring: ((customId: string) => boolean) | null = null;

  const id = (prefix: string) => `${prefix}${randomBytes(8).toString('hex')}`;
  const phase = (b: FakeBatch): 'validating' | 'in_progress' | 'completed' | 'expired' => {
    const age = Date.now() - b.createdAt;
    if (age < VALIDATING_MS) return 'validating';
    if (held || age < COMPLETES_AFTER_MS) return 'in_progress';
    return b.expired ? 'expired' : 'completed';
  };
  const answered = (b: FakeBatch) =>
    b.requests.map((r) => ({
      custom_id: r.custom_id,
      answer: b.expired && expiringOf(b)(r.custom_id) ? null : answer(b.protocol, r.body, r.custom_id),
    }));
  const unanswered = new Map<string, (customId: string) => boolean>();
  const expiringOf = (b: FakeBatch) => unanswered.get(b.id) ?? (() => false);

  const make = (protocol: BatchProtocol, requests: FakeBatch['requests'], metadata: FakeBatch['metadata']) => {
    const b: FakeBatch = {
      id: id(protocol === 'openai' ? 'batch_' : 'msgbatch_'),
      protocol,
      requests,
      metadata,
      createdAt: Date.now(),
      expired: expiring !== null,
      polls: 0,
    };
    if (expiring) unanswered.set(b.id, expiring);
    expiring = null;
    batches.push(b);
    return b;
  };

  const openAiBatch = (b: FakeBatch) => {
    const status = phase(b);
    const ended = status === 'completed' || status === 'expired';
    const lines = ended ? answered(b) : [];
    const ok = lines.filter((l) => l.answer?.ok).length;
    const created = Math.floor(b.createdAt / 1000);
    return {
      id: b.id,
      object: 'batch',
      endpoint: '/v1/chat/completions',
      errors: null,
      input_file_id: `file-in-${b.id}`,
      completion_window: '24h',
      status,
      output_file_id: ended ? `file-out-${b.id}` : null,
      error_file_id: ended && ok < lines.length ? `file-err-${b.id}` : null,
      created_at: created,
      in_progress_at: status === 'validating' ? null : created,
      expires_at: created + 86_400,
      finalizing_at: ended ? created : null,
      completed_at: status === 'completed' ? created : null,
      failed_at: null,
      expired_at: status === 'expired' ? created : null,
      cancelling_at: null,
      cancelled_at: null,
      request_counts: { total: b.requests.length, completed: ok, failed: ended ? lines.length - ok : 0 },
      metadata: b.metadata,
    };
  };

  const anthropicBatch = (b: FakeBatch, base: string) => {
    const status = phase(b);
    const ended = status === 'completed' || status === 'expired';
    const lines = ended ? answered(b) : [];
    const counts = {
      processing: ended ? 0 : b.requests.length,
      succeeded: lines.filter((l) => l.answer?.ok).length,
      errored: lines.filter((l) => l.answer && !l.answer.ok).length,
      canceled: 0,
      expired: lines.filter((l) => l.answer === null).length,
    };
    return {
      id: b.id,
      type: 'message_batch',
      processing_status: ended ? 'ended' : 'in_progress',
      request_counts: counts,
      ended_at: ended ? new Date().toISOString() : null,
      created_at: new Date(b.createdAt).toISOString(),
      expires_at: new Date(b.createdAt + 86_400_000).toISOString(),
      archived_at: null,
      cancel_initiated_at: null,
      results_url: ended ? `${base}/v1/messages/batches/${b.id}/results` : null,
    };
  };

  const openAiFile = (b: FakeBatch, kind: 'out' | 'err') =>
    answered(b)
      .filter((l) => (kind === 'out' ? l.answer?.ok : !l.answer?.ok))
      .map((l) =>
        JSON.stringify({
          id: `batch_req_${l.custom_id}`,
          custom_id: l.custom_id,
          response:
            l.answer === null
              ? null
              : {
                  status_code: l.answer.ok ? 200 : l.answer.status,
                  request_id: `req_${l.custom_id}`,
                  body: l.answer.ok
                    ? l.answer.body
                    : { error: { message: l.answer.message, type: 'invalid_request_error' } },
                },
          error:
            l.answer === null
              ? {
                  code: 'batch_expired',
                  message: 'This request could not be executed before the completion window expired.',
                }
              : null,
        }),
      )
      .join('\n');

  const anthropicResults = (b: FakeBatch) =>
    answered(b)
      .map((l) =>
        JSON.stringify({
          custom_id: l.custom_id,
          result:
            l.answer === null
              ? { type: 'expired' }
              : l.answer.ok
                ? { type: 'succeeded', message: l.answer.body }
                : {
                    type: 'errored',
                    error: { type: 'error', error: { type: 'invalid_request_error', message: l.answer.message } },
                  },
        }),
      )
      .join('\n');

  const page = <T extends { id: string }>(all: T[], after: string | null, limit: number) => {
    const newestFirst = [...all].reverse();
    const from = after ? newestFirst.findIndex((b) => b.id === after) + 1 : 0;
    const data = newestFirst.slice(from, from + limit);
    return {
      data,
      has_more: from + limit < newestFirst.length,
      first_id: data[0]?.id ?? null,
      last_id: data.at(-1)?.id ?? null,
    };
  };

  const send = (res: ServerResponse, status: number, body: unknown, type = 'application/json') => {
    res.writeHead(status, { 'content-type': type });
    res.end(typeof body === 'string' ? body : JSON.stringify(body));
  };
  const find = (batchId: string) => batches.find((b) => b.id === batchId);

  return {
    batches,
    hold: () => void (held = true),
    release: () => void (held = false),
    expireNext: (which) => void (expiring = which),
    handles: (method, path) => (method === 'GET' || method === 'POST') && ROUTES.some((r) => r.test(path)),
    async handle(req, res, url) {
      const raw = await readRaw(req);
      const path = url.pathname;
      const base = `http://${req.headers.host}`;
      const parts = path.split('/');
      if (req.method === 'POST' && path === '/v1/files') {
        const fileId = id('file-');
        files.set(fileId, multipartFile(raw, String(req.headers['content-type'] ?? '')));
        return send(res, 200, {
          id: fileId,
          object: 'file',
          bytes: raw.length,
          created_at: Math.floor(Date.now() / 1000),
          filename: 'batch.jsonl',
          purpose: 'batch',
          status: 'processed',
        });
      }
      if (req.method === 'GET' && /^\/v1\/files\/[^/]+\/content$/.test(path)) {
        const fileId = parts[3] as string;
        const [, kind, batchId] = /^file-(out|err)-(.+)$/.exec(fileId) ?? [];
        const b = batchId ? find(batchId) : undefined;
        if (!b || !kind) return send(res, 404, { error: { message: 'No such file', type: 'invalid_request_error' } });
        return send(res, 200, openAiFile(b, kind as 'out' | 'err'), 'application/octet-stream');
      }
      if (req.method === 'POST' && path === '/v1/batches') {
        const body = JSON.parse(raw.toString('utf8'));
        const text = files.get(body.input_file_id);
        if (text === undefined)
          return send(res, 400, { error: { message: 'No such input file', type: 'invalid_request_error' } });
        const requests = text
          .split('\n')
          .filter((l) => l.trim())
          .map((l) => {
            const line = JSON.parse(l);
            return { custom_id: line.custom_id, body: line.body };
          });
        return send(res, 200, openAiBatch(make('openai', requests, body.metadata ?? null)));
      }
      if (req.method === 'GET' && path === '/v1/batches')
        return send(res, 200, {
          object: 'list',
          ...page(
            batches.filter((b) => b.protocol === 'openai').map(openAiBatch),
            url.searchParams.get('after'),
            Number(url.searchParams.get('limit') ?? 20),
          ),
        });
      if (req.method === 'GET' && /^\/v1\/batches\/[^/]+$/.test(path)) {
        const b = find(parts[3] as string);
        if (!b) return send(res, 404, { error: { message: 'No such batch', type: 'invalid_request_error' } });
        b.polls++;
        return send(res, 200, openAiBatch(b));
      }
      if (req.method === 'POST' && path === '/v1/messages/batches') {
        const body = JSON.parse(raw.toString('utf8'));
        const requests = (body.requests as Array<{ custom_id: string; params: unknown }>).map((r) => ({
          custom_id: r.custom_id,
          body: r.params,
        }));
        return send(res, 200, anthropicBatch(make('anthropic', requests, null), base));
      }
      if (req.method === 'GET' && path === '/v1/messages/batches')
        return send(
          res,
          200,
          page(
            batches.filter((b) => b.protocol === 'anthropic').map((b) => anthropicBatch(b, base)),
            url.searchParams.get('after_id'),
            Number(url.searchParams.get('limit') ?? 20),
          ),
        );
      const b = find(parts[4] as string);
      if (!b) return send(res, 404, { type: 'error', error: { type: 'not_found_error', message: 'No such batch' } });
      if (path.endsWith('/results')) {
        if (phase(b) !== 'completed' && phase(b) !== 'expired')
          return send(res, 400, {
            type: 'error',
            error: { type: 'invalid_request_error', message: 'Batch has not ended' },
          });
        return send(res, 200, anthropicResults(b), 'application/binary');
      }
      b.polls++;
      return send(res, 200, anthropicBatch(b, base));
    },
  };
}

async function readRaw(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** The `file` part of a multipart/form-data upload. */
function multipartFile(raw: Buffer, contentType: string): string {
  const boundary = /boundary=(?:"([^"]+)"|([^;]+))/.exec(contentType);
  const mark = `--${boundary?.[1] ?? boundary?.[2] ?? ''}`;
  for (const part of raw.toString('utf8').split(mark)) {
    if (!/name="file"/.test(part)) continue;
    const start = part.indexOf('\r\n\r\n');
    return part.slice(start + 4).replace(/\r\n$/, '');
  }
  return '';
}

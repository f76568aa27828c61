import type { ServerResponse } from 'node:http';
import type { Context, Middleware } from 'koa';
import { type AuditNaming, NO_ROUTE_ACTION, resourceOf } from '../access/audit-actions';
import { auditNoteOf } from '../access/audit-note';
import { callerOf } from '../access/caller';
import type { AuditActor, AuditFields } from '../db/audit-trail';
import type { AuditWriter } from './audit-writer';
import { requestIdOf } from './request-id';
import type { RouteFacts } from './route-lookup';

const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/** A target id longer than this is cut: an id is short, and a refused request's path may hold anything. */
const MAX_TARGET_ID = 256;
/** What an id in an answer looks like (`S12`, `UA3`, `K7`): anything else in `id` is not taken. */
const ANSWERED_ID = /^[A-Za-z0-9_:.-]{1,64}$/;

export interface AuditRecorderOptions {
  writer: AuditWriter;
  apiPrefix: string;
  /** The API route a request is for (route-lookup.ts), null for none. */
  route: (method: string, path: string) => RouteFacts | null;
  /** The requests outside the API the trail records (signing in and out, approval links), and how it names them. */
  site: (method: string, path: string) => AuditNaming | null;
  /** The client's address, as failed logins are counted (login-attempts.ts). */
  clientAddress: (ctx: Context) => string;
}

interface Planned {
  naming: AuditNaming;
  params: Record<string, string>;
}

const NO_ROUTE: Planned = { naming: { action: NO_ROUTE_ACTION, target: { type: 'route', params: [] } }, params: {} };
const ANONYMOUS: AuditActor = { user_id: null, key_id: null, via: 'anonymous' };

/**
 * Records every state-changing request under the API, whatever its answer, every sign-in, sign-out
 * and approval-link decision, and any request a handler left a note on. It runs outside the error
 * middleware and the gate, so it sees the status finally answered: a refusal of the gate (401, 403),
 * a thrown error as rendered (404, 422, 503), a success. The entry is stored before Koa sends a
 * byte of the answer; one that MongoDB refuses is handled by the writer's policy (audit-writer.ts).
 * An entry holds ids, the action's name and the status, never the path, a body or a header: a
 * webhook's token and an approval link's never reach it.
 */
export function auditRecorder(options: AuditRecorderOptions): Middleware {
  const { apiPrefix, writer, clientAddress } = options;
  const isApi = (path: string) => path === apiPrefix || path.startsWith(`${apiPrefix}/`);

  function plan(ctx: Context): Planned | null {
    if (!isApi(ctx.path)) {
      const naming = options.site(ctx.method, ctx.path);
      return naming ? { naming, params: {} } : null;
    }
    if (!STATE_CHANGING.has(ctx.method)) return null;
    const facts = options.route(ctx.method, ctx.path);
    return facts?.route.audit ? { naming: facts.route.audit, params: facts.params } : NO_ROUTE;
  }

  function entryOf(ctx: Context, planned: Planned | null, status: number): AuditFields {
    const note = auditNoteOf(ctx.state);
    const caller = callerOf(ctx.state);
    const actor: AuditActor = note?.actor
      ? { user_id: note.actor.user_id ?? null, key_id: note.actor.key_id ?? null, via: note.actor.via }
      : caller
        ? { user_id: caller.userId, key_id: caller.keyId, via: caller.via }
        : ANONYMOUS;
    const action = note?.action ?? planned?.naming.action ?? NO_ROUTE_ACTION;
    const target = note?.target ?? {
      type: planned?.naming.target.type ?? resourceOf(action),
      id: planned ? targetIdOf(ctx, planned, status) : null,
    };
    return {
      time: new Date(),
      actor,
      action,
      target,
      outcome: status,
      request_id: requestIdOf(ctx.state),
      ip: clientAddress(ctx),
    };
  }

  return async function recordAudit(ctx, next) {
    const planned = plan(ctx);
    let written: Promise<void> | null = null;
    const write = (status: number) => (written ??= writer.record(entryOf(ctx, planned, status)));
    if (planned) entryBeforeOwnAnswer(ctx, write);
    await next();
    if (written) await written;
    else if (planned || auditNoteOf(ctx.state)) await write(ctx.status);
  };
}

/**
 * The target's id: the path's parameters, or for a thing created (`workflow.create`, `key.create`)
 * the `id` of the answer. Only that field is read from an answer, never the rest (a new key's `key`).
 */
function targetIdOf(ctx: Context, { naming, params }: Planned, status: number): string | null {
  if (naming.target.params.length > 0)
    return naming.target.params
      .map((p) => params[p] ?? '')
      .join('/')
      .slice(0, MAX_TARGET_ID);
  const created = naming.action === `${naming.target.type}.create` && status >= 200 && status < 300;
  const body: unknown = ctx.body;
  if (!created || typeof body !== 'object' || body === null || !('id' in body)) return null;
  return typeof body.id === 'string' && ANSWERED_ID.test(body.id) ? body.id : null;
}

/**
 * A handler that writes its answer itself (`ctx.respond = false`: the MCP transport streams its
 * events, or answers 202 and ends at once) sends its headers before the chain returns. Its entry
 * still comes first: from its first `writeHead`, `flushHeaders`, `write` or `end`, the answer's calls are held, in
 * order, and made once the entry is stored. (Corking the socket would not do: `end()` uncorks it
 * fully, so a 202 that ends at once went out before its entry.)
 */
function entryBeforeOwnAnswer(ctx: Context, write: (status: number) => Promise<void>): void {
  const res = ctx.res;
  type Call = (this: ServerResponse, ...args: unknown[]) => unknown;
  const held: Array<() => void> = [];
  let stored: Promise<void> | null = null;
  let released = false;
  const release = () => {
    released = true;
    for (const call of held.splice(0)) {
      try {
        call();
      } catch {
        // A second writeHead of an error path that saw `headersSent` still false: the first answer stands.
      }
    }
  };
  const holding = (name: 'writeHead' | 'write' | 'end' | 'flushHeaders') => {
    const original = res[name] as unknown as Call;
    return function heldUntilEntry(this: ServerResponse, ...args: unknown[]) {
      if (ctx.respond !== false || released) return original.apply(this, args);
      stored ??= write(name === 'writeHead' ? Number(args[0]) : res.statusCode).finally(release);
      held.push(() => original.apply(res, args));
      // What each would answer: writeHead and end their response (for chaining), write that it took the chunk.
      return name === 'write' ? true : name === 'flushHeaders' ? undefined : res;
    } as unknown as ServerResponse[typeof name];
  };
  res.writeHead = holding('writeHead') as ServerResponse['writeHead'];
  res.write = holding('write') as ServerResponse['write'];
  res.end = holding('end') as ServerResponse['end'];
  // Streaming answers flush their headers right after writing them (@hono/node-server, which the MCP transport uses).
  res.flushHeaders = holding('flushHeaders') as ServerResponse['flushHeaders'];
}

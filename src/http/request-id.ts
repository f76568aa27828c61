import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';

/**
 * An `X-Request-Id` a client or a proxy in front sent is kept when it is 1 to 128 characters of
 * letters, digits and `._:+/=-` (what proxies' and tracers' ids are made of), so one id follows a
 * request through the proxy's log, Spur's log and the audit trail. Anything else (longer, spaces,
 * control characters, other bytes) is replaced by a random UUID: a header never reaches a log line
 * or an entry as sent. A kept id is the client's claim, not unique: the audit entry's own id is.
 */
const CLIENT_REQUEST_ID = /^[A-Za-z0-9._:+/=-]{1,128}$/;

/** Gives every request an id, answered as `X-Request-Id` (errors too) and recorded in its audit entry. */
export function requestIds(): Middleware {
  return async function setRequestId(ctx, next) {
    const sent = ctx.get('x-request-id');
    const id = CLIENT_REQUEST_ID.test(sent) ? sent : randomUUID();
    (ctx.state as { requestId?: string }).requestId = id;
    ctx.set('X-Request-Id', id);
    await next();
  };
}

/** The request's id (requestIds sets it before anything else reads it). */
export function requestIdOf(state: unknown): string {
  return (state as { requestId?: string }).requestId ?? '';
}

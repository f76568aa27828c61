import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import type { Context } from 'koa';
import { browserSessions, sameOriginOrSafe } from '../../src/http/browser-session';

/** Just what the session code reads and writes of a Koa context. */
function fakeCtx(headers: Record<string, string>, method = 'GET', host = '127.0.0.1:6080') {
  const set: string[] = [];
  const ctx = {
    method,
    host,
    secure: false,
    get: (name: string) => headers[name.toLowerCase()] ?? '',
    append: (_name: string, value: string) => set.push(value),
  };
  return { ctx: ctx as unknown as Context, set };
}

describe('unit: browser session cookies', () => {
  const secret = Buffer.alloc(32, 7);
  const digest = createHash('sha256').update('k').digest();

  it('expire: valid until the expiry, refused after it', () => {
    let now = 1_000_000;
    const sessions = browserSessions(secret, [digest], 60_000, () => now);
    const { ctx, set } = fakeCtx({});
    sessions.issue(ctx, digest);
    const cookie = set[0]!.split(';')[0]!;
    assert.equal(sessions.valid(fakeCtx({ cookie }).ctx), true);
    now += 59_999;
    assert.equal(sessions.valid(fakeCtx({ cookie }).ctx), true);
    now += 2;
    assert.equal(sessions.valid(fakeCtx({ cookie }).ctx), false);
  });

  it('are bound to the server secret', () => {
    const { ctx, set } = fakeCtx({});
    browserSessions(secret, [digest], 60_000).issue(ctx, digest);
    const cookie = set[0]!.split(';')[0]!;
    assert.equal(browserSessions(Buffer.alloc(32, 8), [digest], 60_000).valid(fakeCtx({ cookie }).ctx), false);
  });

  it('CSRF: state changes need this server as Origin; reads need none, but never another one', () => {
    assert.equal(sameOriginOrSafe(fakeCtx({}, 'GET').ctx), true);
    assert.equal(sameOriginOrSafe(fakeCtx({ origin: 'http://localhost:3000' }, 'GET').ctx), false);
    assert.equal(sameOriginOrSafe(fakeCtx({ origin: 'http://127.0.0.1:6080' }, 'GET').ctx), true);
    assert.equal(sameOriginOrSafe(fakeCtx({ origin: 'http://127.0.0.1:6080' }, 'POST').ctx), true);
    assert.equal(sameOriginOrSafe(fakeCtx({ origin: 'http://127.0.0.1:6081' }, 'POST').ctx), false);
    assert.equal(sameOriginOrSafe(fakeCtx({ origin: 'null' }, 'DELETE').ctx), false);
    assert.equal(sameOriginOrSafe(fakeCtx({}, 'PUT').ctx), false);
  });
});

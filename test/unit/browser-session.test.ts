import assert from 'node:assert/strict';
import type { Context } from 'koa';
import { requestIsTls, sameOriginOrSafe, sessionCookieName } from '../../src/http/browser-session';
import { clientKey, loginAttempts } from '../../src/http/login-attempts';

/** Just what the session code reads of a Koa context. */
function fakeCtx(headers: Record<string, string>, method = 'GET', host = '127.0.0.1:6080', secure = false) {
  const ctx = { method, host, secure, get: (name: string) => headers[name.toLowerCase()] ?? '' };
  return ctx as unknown as Context;
}

describe('unit: browser session cookies', () => {
  it('TLS: the connection or any https in X-Forwarded-Proto; a client-set http never downgrades', () => {
    assert.equal(requestIsTls(fakeCtx({})), false);
    assert.equal(requestIsTls(fakeCtx({}, 'GET', 'h', true)), true);
    assert.equal(
      requestIsTls(fakeCtx({ 'x-forwarded-proto': 'http' }, 'GET', 'h', true)),
      true,
      'a TLS connection stays TLS',
    );
    assert.equal(
      requestIsTls(fakeCtx({ 'x-forwarded-proto': 'http, https' })),
      true,
      "a proxy appending https after a client's http",
    );
    assert.equal(requestIsTls(fakeCtx({ 'x-forwarded-proto': 'HTTPS' })), true);
    assert.equal(sessionCookieName(fakeCtx({ 'x-forwarded-proto': 'http, https' })), '__Host-spur_session');
    assert.equal(sessionCookieName(fakeCtx({})), 'spur_session');
  });

  it('CSRF: state changes need this server as Origin; reads need none, but never another one', () => {
    assert.equal(sameOriginOrSafe(fakeCtx({}, 'GET')), true);
    assert.equal(sameOriginOrSafe(fakeCtx({ origin: 'http://localhost:3000' }, 'GET')), false);
    assert.equal(sameOriginOrSafe(fakeCtx({ origin: 'http://127.0.0.1:6080' }, 'GET')), true);
    assert.equal(sameOriginOrSafe(fakeCtx({ origin: 'http://127.0.0.1:6080' }, 'POST')), true);
    assert.equal(sameOriginOrSafe(fakeCtx({ origin: 'http://127.0.0.1:6081' }, 'POST')), false);
    assert.equal(sameOriginOrSafe(fakeCtx({ origin: 'null' }, 'DELETE')), false);
    assert.equal(sameOriginOrSafe(fakeCtx({}, 'PUT')), false);
  });
});

describe('unit: login attempt limit', () => {
  it('refuses a client after its failures fill the window, until the oldest leaves it; others are unaffected', () => {
    let now = 1_000_000;
    const attempts = loginAttempts({ maxFailures: 3, windowMs: 60_000 }, () => now);
    for (let i = 0; i < 3; i++) {
      assert.equal(attempts.retryAfterSeconds('10.0.0.1'), 0);
      attempts.failed('10.0.0.1');
      now += 1000;
    }
    assert.equal(attempts.retryAfterSeconds('10.0.0.1'), 57, 'the first failure (at +0 s) leaves the window at +60 s');
    assert.equal(attempts.retryAfterSeconds('10.0.0.2'), 0);
    now += 56_999;
    assert.ok(attempts.retryAfterSeconds('10.0.0.1') > 0);
    now += 1;
    assert.equal(attempts.retryAfterSeconds('10.0.0.1'), 0);
  });

  it('counts an IPv6 /64 as one client and an IPv4-mapped address as its IPv4 one', () => {
    assert.equal(clientKey('2001:db8:1:2:aaaa::1'), clientKey('2001:0db8:0001:0002:ffff:ffff:ffff:ffff'));
    assert.notEqual(clientKey('2001:db8:1:2::1'), clientKey('2001:db8:1:3::1'));
    assert.equal(clientKey('::ffff:127.0.0.2'), '127.0.0.2');
    assert.equal(clientKey('::1'), '0:0:0:0::/64');
    assert.equal(clientKey('fe80::1%eth0'), 'fe80:0:0:0::/64');
  });
});

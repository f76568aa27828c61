import assert from 'node:assert/strict';
import { ConfigError, loadConfig } from '../../src/config/load-config';
import { roleFromClaims, usernameFromClaims } from '../../src/access/oidc-accounts';
import { anonymousAllowlist } from '../../src/http/allowlist';

const KEYS = { SPUR_API_KEY_HASHES: `sha256:${'a'.repeat(64)}` };
const FULL = {
  ...KEYS,
  SPUR_OIDC_ISSUER: 'https://login.example.com/realms/spur',
  SPUR_OIDC_CLIENT_ID: 'spur',
  SPUR_OIDC_CLIENT_SECRET: 'the secret',
};

describe('OpenID Connect settings', () => {
  it('are off with none of issuer, client id and secret, and on with all three (the button named after the issuer host)', () => {
    assert.equal(loadConfig({}).oidc, null);
    const oidc = loadConfig(FULL).oidc;
    assert.equal(oidc?.label, 'login.example.com');
    assert.equal(oidc?.defaultRole, 'viewer');
    assert.equal(oidc?.roleClaim, undefined);
    assert.equal(oidc?.scopes, 'openid profile email');
    assert.equal(oidc?.publicUrl, undefined);
    assert.equal(
      loadConfig({ ...FULL, SPUR_PUBLIC_URL: 'https://spur.example.com/' }).oidc?.publicUrl,
      'https://spur.example.com',
    );
  });

  it('stop the process naming what is missing when only some are set', () => {
    assert.throws(
      () => loadConfig({ ...KEYS, SPUR_OIDC_ISSUER: FULL.SPUR_OIDC_ISSUER }),
      (err: Error) =>
        err instanceof ConfigError &&
        /needs SPUR_OIDC_CLIENT_ID and SPUR_OIDC_CLIENT_SECRET besides SPUR_OIDC_ISSUER/.test(err.message),
    );
    assert.throws(
      () => loadConfig({ ...FULL, SPUR_OIDC_CLIENT_SECRET: '' }),
      (err: Error) => /needs SPUR_OIDC_CLIENT_SECRET besides/.test(err.message),
    );
  });

  it('refuse sign-in on a server that requires none (no keys, no SPUR_SIGN_IN_REQUIRED), an http issuer off loopback, an unknown default role, scopes without openid', () => {
    assert.throws(
      () => loadConfig({ ...FULL, SPUR_API_KEY_HASHES: '' }),
      /SPUR_OIDC_ISSUER needs SPUR_SIGN_IN_REQUIRED=true or SPUR_API_KEY_HASHES/,
    );
    assert.ok(
      loadConfig({ ...FULL, SPUR_API_KEY_HASHES: '', SPUR_SIGN_IN_REQUIRED: 'true' }).oidc,
      'users only, no keys',
    );
    assert.throws(
      () => loadConfig({ ...FULL, SPUR_OIDC_ISSUER: 'http://login.example.com' }),
      /SPUR_OIDC_ISSUER: https, or http on a loopback host/,
    );
    assert.equal(
      loadConfig({ ...FULL, SPUR_OIDC_ISSUER: 'http://localhost:9000' }).oidc?.issuer,
      'http://localhost:9000',
    );
    assert.equal(
      loadConfig({ ...FULL, SPUR_OIDC_ISSUER: 'http://127.0.0.1:9000' }).oidc?.issuer,
      'http://127.0.0.1:9000',
    );
    assert.throws(() => loadConfig({ ...FULL, SPUR_OIDC_DEFAULT_ROLE: 'root' }), /SPUR_OIDC_DEFAULT_ROLE/);
    assert.throws(() => loadConfig({ ...FULL, SPUR_OIDC_SCOPES: 'profile email' }), /SPUR_OIDC_SCOPES/);
  });
});

describe('an OpenID account as a Spur user', () => {
  const rules = { roleClaim: 'spur_role', defaultRole: 'viewer' as const };

  it('takes the role the claim names; the strongest of a list; the default for anything else', () => {
    assert.equal(roleFromClaims({ spur_role: 'builder' }, rules), 'builder');
    assert.equal(roleFromClaims({ spur_role: ['viewer', 'admin', 'staff'] }, rules), 'admin');
    for (const value of [undefined, 'root', 'Admin', ['staff'], 42, { role: 'admin' }])
      assert.equal(roleFromClaims({ spur_role: value }, rules), 'viewer', JSON.stringify(value));
    assert.equal(roleFromClaims({ spur_role: 'admin' }, { roleClaim: undefined, defaultRole: 'approver' }), 'approver');
  });

  it('is named from preferred_username, else email, else sub, in the characters usernames take', () => {
    assert.equal(usernameFromClaims({ preferred_username: 'ada', email: 'x@y', sub: '1' }), 'ada');
    assert.equal(usernameFromClaims({ email: 'ada.l@example.org', sub: '1' }), 'ada.l@example.org');
    assert.equal(
      usernameFromClaims({ preferred_username: '  Ada Lovelace/(1815) ', sub: '1' }),
      'Ada-Lovelace--1815--',
    );
    assert.equal(usernameFromClaims({ preferred_username: '---', sub: 'abc|123' }), 'abc-123');
    assert.equal(usernameFromClaims({ preferred_username: 'x'.repeat(300), sub: '1' }).length, 56);
    assert.equal(usernameFromClaims({ sub: '' }), 'user');
  });
});

describe('the anonymous allowlist and the OpenID routes', () => {
  const allow = anonymousAllowlist({
    apiPrefix: '/api',
    webUi: () => 'page',
    signInPaths: ['/login/oidc', '/login/oidc/callback'],
  });
  it('lets GETs of the start and callback in, and nothing else on them', () => {
    assert.equal(allow('GET', '/login/oidc'), 'allow');
    assert.equal(allow('GET', '/login/oidc/callback'), 'allow');
    for (const method of ['HEAD', 'POST', 'PUT', 'DELETE']) assert.equal(allow(method, '/login/oidc/callback'), 'deny');
    assert.equal(allow('GET', '/login/oidc/callback/'), 'login', 'exact paths only');
    assert.equal(
      anonymousAllowlist({ apiPrefix: '/api', webUi: () => 'page' })('GET', '/login/oidc'),
      'login',
      'not configured: not allowed',
    );
  });
});

import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import { hashApiKey } from '../../src/http/api-keys';
import { startApi, type TestApi } from '../support/api';
import { type PlainReply, postLogin, sessionCookieOf, tinyWebUiExport } from '../support/browser-login';

const KEY = 'spur_rate-limit-test-key';
const ATTACKER = '127.0.0.2';

const originOf = (api: TestApi) => api.baseUrl.replace(/\/api$/, '');
const sessionCount = (api: TestApi) => api.mongo.collection('browser_sessions').countDocuments();

/** Wrong keys from `from` until the api refuses with 429 (at most `max` tries); that refusal. */
async function failUntilRefused(
  origin: string,
  max: number,
  options: { localAddress?: string; headers?: Record<string, string> },
): Promise<{ refused: PlainReply; failures: number }> {
  for (let i = 0; i < max; i++) {
    const reply = await postLogin(origin, `wrong-${i}`, options);
    if (reply.status === 429) return { refused: reply, failures: i };
    assert.equal(reply.status, 401);
  }
  throw new Error(`no 429 after ${max} wrong keys`);
}

describe('security: failed logins are limited per client address', function () {
  this.timeout(120_000);
  const env = (extra: Record<string, string> = {}) => ({
    SPUR_API_KEY_HASHES: hashApiKey(KEY),
    SPUR_WEB_UI_DIR: tinyWebUiExport(),
    ...extra,
  });

  it('the 11th failed login from one address in a minute gets 429 with Retry-After; then even the right key is refused; another address is not', async () => {
    const api = await startApi(env());
    const origin = originOf(api);
    try {
      for (let i = 0; i < 10; i++)
        assert.equal((await postLogin(origin, `guess-${i}`, { localAddress: ATTACKER })).status, 401, `guess ${i}`);
      const refused = await postLogin(origin, 'guess-10', { localAddress: ATTACKER });
      assert.equal(refused.status, 429);
      const retryAfter = Number(refused.headers['retry-after']);
      assert.ok(
        Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60,
        `Retry-After ${refused.headers['retry-after']}`,
      );

      const sessionsBefore = await sessionCount(api);
      for (const headers of [{}, { 'x-forwarded-for': '127.0.0.9' }] as Record<string, string>[]) {
        const right = await postLogin(origin, KEY, { localAddress: ATTACKER, headers });
        assert.equal(right.status, 429, 'the right key too, whatever X-Forwarded-For says');
        assert.equal(sessionCookieOf(right), '', 'no cookie');
      }
      assert.equal(await sessionCount(api), sessionsBefore, 'no session was made');

      const elsewhere = await postLogin(origin, KEY, { localAddress: '127.0.0.1' });
      assert.equal(elsewhere.status, 303);
      assert.match(sessionCookieOf(elsewhere), /^spur_session=/);
    } finally {
      await api.close();
    }
  });

  it('once the window has passed (the Retry-After the api gave), the right key is accepted again', async () => {
    const api = await startApi(env({ SPUR_LOGIN_MAX_FAILURES: '2', SPUR_LOGIN_WINDOW_SECONDS: '2' }));
    const origin = originOf(api);
    try {
      const { refused } = await failUntilRefused(origin, 20, { localAddress: ATTACKER });
      assert.equal((await postLogin(origin, KEY, { localAddress: ATTACKER })).status, 429);
      await delay(Number(refused.headers['retry-after']) * 1000);
      const accepted = await postLogin(origin, KEY, { localAddress: ATTACKER });
      assert.equal(accepted.status, 303);
      assert.match(sessionCookieOf(accepted), /^spur_session=/);
    } finally {
      await api.close();
    }
  });

  it('behind a trusted proxy (SPUR_LOGIN_TRUST_FORWARDED_FOR) counts the address the proxy appended, which a client cannot change', async () => {
    const api = await startApi(
      env({ SPUR_LOGIN_MAX_FAILURES: '2', SPUR_LOGIN_WINDOW_SECONDS: '600', SPUR_LOGIN_TRUST_FORWARDED_FOR: 'true' }),
    );
    const origin = originOf(api);
    try {
      const attacker = { 'x-forwarded-for': '203.0.113.7' };
      await failUntilRefused(origin, 3, { headers: attacker });
      const spoofed = await postLogin(origin, KEY, { headers: { 'x-forwarded-for': '198.51.100.1, 203.0.113.7' } });
      assert.equal(spoofed.status, 429, 'an address the client wrote before the proxy’s does not count');
      const other = await postLogin(origin, KEY, { headers: { 'x-forwarded-for': '203.0.113.8' } });
      assert.equal(other.status, 303, 'another client behind the same proxy');
    } finally {
      await api.close();
    }
  });
});

import assert from 'node:assert/strict';
import { type Engine, startEngine } from '../support/engine';
import { type FakeHttpApi, startFakeHttpApi } from '../support/fake-http-api';
import { runHttpNode } from '../support/http-request-runs';
import { setEnv } from '../support/integration-runs';

// HTTPRequestNode fed hostile workflow input. `api` is the service a credential is entered for
// (HTTP_API_BASE = api/v1); `other` is any other host. Everything is on loopback with private
// addresses allowed, so only the node's own rules stand between the input and `other`.

const KEY = 'http-key-only-for-api-v1-0002';
const bearer = { Authorization: { variable: 'HTTP_API_KEY', prefix: 'Bearer ' } };

describe('security: HTTPRequestNode against hostile input', function () {
  this.timeout(120_000);
  let engine: Engine;
  let api: FakeHttpApi;
  let other: FakeHttpApi;

  before(async () => {
    engine = await startEngine({ SPUR_OUTBOUND_ALLOW_PRIVATE: 'true' });
    [api, other] = await Promise.all([startFakeHttpApi(), startFakeHttpApi()]);
    await setEnv(engine, { HTTP_API_BASE: `${api.url}/v1`, HTTP_API_KEY: KEY });
  });
  after(async () => {
    await engine?.close();
    await Promise.all([api?.close(), other?.close()]);
  });

  const keySeenBy = (fake: FakeHttpApi) => fake.seen.filter((r) => JSON.stringify(r).includes(KEY)).length;

  it('a CR/LF in input rendered into a header fails the node before anything is sent: no smuggled header arrives', async () => {
    const before = api.seen.length;
    for (const x of ['a\r\nX-Injected: 1', 'a\nX-Injected: 1', 'a\rb', 'a\u0000b']) {
      const run = await runHttpNode(
        engine,
        { url: `${api.url}/v1/h`, headers: { 'X-Note': 'note {{ in.x }}' } },
        { x },
      );
      assert.equal(run.task.status, 'FAILED', JSON.stringify(x));
      assert.match(
        run.task.error ?? '',
        /headers\.X-Note holds a line break \(CR\/LF\) or NUL once rendered; nothing was sent/,
      );
    }
    assert.equal(api.seen.length, before, 'the API received nothing');
    // CR/LF in the url and query are encoded, never a new line of the request.
    const run = await runHttpNode(
      engine,
      { url: `${api.url}/v1/q/{{ in.x }}`, query: { v: '{{ in.x }}' } },
      { x: 'a\r\nX-Injected: 1' },
    );
    assert.equal(run.task.status, 'COMPLETED', run.task.error ?? '');
    const sent = api.seen.at(-1);
    assert.ok(!sent?.rawHeaders.some((h) => /x-injected/i.test(h)), 'no smuggled header');
    assert.match(sent?.url ?? '', /v=a%0D%0AX-Injected%3A\+1$/);
  });

  it('input cannot move a request off the host its url template writes: the other host receives nothing', async () => {
    const port = new URL(other.url).port;
    const cases: Array<[string, string]> = [
      [`${api.url}/v1/{{ in.x }}`, `@127.0.0.1:${port}/`],
      [`${api.url}{{ in.x }}`, `@127.0.0.1:${port}/v1`],
      [`http://127.0.0.1:{{ in.x }}/v1/`, port],
      [`${api.url}/v1/{{ in.x }}`, `//127.0.0.1:${port}/`],
      [`${api.url}/v1/{{ in.x }}`, `../../..//127.0.0.1:${port}`],
    ];
    for (const [url, x] of cases) {
      const before = api.seen.length;
      const run = await runHttpNode(engine, { url }, { x });
      // Either the input stayed a path on the written host (the API got it), or the node refused.
      if (run.task.status === 'COMPLETED') assert.equal(api.seen.length, before + 1, `${url} with ${x}`);
      else assert.match(run.task.error ?? '', /moved the request|user name or password/, `${url} with ${x}`);
    }
    assert.equal(other.seen.length, 0, 'the other host received no request');
  });

  it('`{{` in input is data: it reaches the API as typed, never rendered', async () => {
    const x = '{{ 7 * 7 }}{% for i in range(3) %}L{% endfor %}';
    const run = await runHttpNode(
      engine,
      {
        method: 'POST',
        url: `${api.url}/v1/t/{{ in.x }}`,
        headers: { 'X-Echo': '{{ in.x }}' },
        body: 'said: {{ in.x }}',
      },
      { x },
    );
    assert.equal(run.task.status, 'COMPLETED', run.task.error ?? '');
    const sent = api.seen.at(-1);
    assert.equal(sent?.body, `said: ${x}`);
    assert.equal(sent?.headers['content-type'], 'text/plain; charset=utf-8', 'text that is not JSON goes as text');
    assert.equal(sent?.headers['x-echo'], x);
    assert.ok(sent?.url.startsWith('/v1/t/%7B%7B%207%20*%207%20%7D%7D%7B%'), sent?.url);
    // Body and header are the input exactly (above); the path holds no rendering either. Only these
    // are checked: the rest of the request (the port in Host, a length) may hold a 49 by chance.
    assert.ok(!sent?.url.includes('49') && !sent?.url.includes('LLL'), `nothing rendered in ${sent?.url}`);
  });

  it('a credential asked for a URL outside its base fails the node naming the base, and the URL receives nothing', async () => {
    const before = api.seen.length;
    for (const url of [
      `${other.url}/v1/x`,
      `${api.url}/v2/x`,
      `${api.url}/v1/..%2Fv2/x`,
      `${api.url}/v1x`,
      `{{ in.x }}`,
    ]) {
      const run = await runHttpNode(engine, { url, headers: bearer }, { x: `${other.url}/v1/x` });
      assert.equal(run.task.status, 'FAILED', url);
      assert.match(
        run.task.error ?? '',
        /HTTP_API_KEY is sent only to URLs under HTTP_API_BASE, and url is not under it|encoded separator/,
        url,
      );
    }
    assert.equal(api.seen.length, before, 'the API outside the base received nothing');
    assert.equal(other.seen.length, 0, 'the other host received nothing');
  });

  it('a redirect from the base to another host is not followed with the credential; one within the base is', async () => {
    api.script('/v1/away', { status: 302, headers: { location: `${other.url}/steal` }, body: '' });
    const run = await runHttpNode(engine, { url: `${api.url}/v1/away`, headers: bearer });
    assert.equal(run.task.status, 'FAILED');
    assert.match(
      run.task.error ?? '',
      /redirected to http:\/\/127\.0\.0\.1:\d+\/steal, outside the base of the credential in headers\.Authorization; the redirect was not followed/,
    );
    api.script('/v1/sideways', { status: 307, headers: { location: '/v2/inside-origin' }, body: '' });
    const sideways = await runHttpNode(engine, { url: `${api.url}/v1/sideways`, headers: bearer });
    assert.equal(sideways.task.status, 'FAILED', 'the same origin outside the base path is not followed either');
    assert.equal(other.seen.length, 0, 'the other host received nothing');
    assert.ok(!api.seen.some((r) => r.url.startsWith('/v2/')), 'nor did the path outside the base');

    api.script('/v1/moved', { status: 301, headers: { location: '/v1/here' }, body: '' });
    const moved = await runHttpNode(engine, { url: `${api.url}/v1/moved`, headers: bearer });
    assert.equal(moved.task.status, 'COMPLETED', moved.task.error ?? '');
    assert.equal(api.seen.at(-1)?.url, '/v1/here');
    assert.equal(api.seen.at(-1)?.headers.authorization, `Bearer ${KEY}`);
    assert.equal(keySeenBy(other), 0);
  });
});

import assert from 'node:assert/strict';
import { NodeExecutionError, TransientNodeError } from '../../src/nodes/errors.js';
import { repoPath } from '../../src/nodes/integrations/github-api.js';
import { renderOrFirstString } from '../../src/nodes/integrations/http/integration-node.js';
import { baseUrlOf } from '../../src/nodes/integrations/http/service-client.js';
import { failureForStatus, serviceMessage } from '../../src/nodes/integrations/http/service-errors.js';
import { retryAfterMs } from '../../src/outbound/retry-after.js';
import { SERVICES } from '../../src/nodes/integrations/http/services.js';
import { preferredTrack, videoIdOf } from '../../src/nodes/integrations/youtube-api.js';
import type { NodeExecutionContext } from '../../src/nodes/types.js';
import { emailAddresses } from '../../src/nodes/tools/send-email-node.js';
import { devOutboundFetch } from '../support/outbound';

const headers = (h: Record<string, string> = {}) => new Headers(h);

function ctxWith(settings: Record<string, string>): NodeExecutionContext {
  return {
    runId: 'R1',
    nodeId: 'n',
    nodeTitle: 'n',
    signal: new AbortController().signal,
    secret: async (name) => settings[name],
    fetch: devOutboundFetch,
    heartbeat: () => undefined,
  };
}

describe('integration HTTP: failure classification', () => {
  it('retries 5xx and 429 with Retry-After only; every other refusal fails at once', () => {
    const gh = SERVICES.github;
    assert.ok(failureForStatus(gh, 503, headers(), '{"message":"down"}') instanceof TransientNodeError);
    const limited = failureForStatus(gh, 429, headers({ 'retry-after': '7' }), '{"message":"slow"}');
    assert.ok(limited instanceof TransientNodeError);
    assert.equal((limited as TransientNodeError).retryAfterMs, 7000);
    for (const status of [400, 401, 403, 404, 422, 429]) {
      const err = failureForStatus(gh, status, headers(), '{"message":"no"}');
      assert.ok(err instanceof NodeExecutionError && !(err instanceof TransientNodeError), String(status));
    }
  });

  it("quotes each service's own words", () => {
    assert.equal(serviceMessage('{"message":"Not Found","documentation_url":"x"}'), 'Not Found');
    assert.equal(serviceMessage('{"ok":false,"error":"channel_not_found"}'), 'channel_not_found');
    assert.equal(serviceMessage('{"error":{"code":403,"message":"denied","status":"PERMISSION_DENIED"}}'), 'denied');
    assert.equal(
      serviceMessage('{"errors":[{"message":"bad key","field":null},{"message":"bad to"}]}'),
      'bad key; bad to',
    );
    assert.equal(serviceMessage('{"message":"Forbidden","error":403}'), 'Forbidden');
    assert.equal(serviceMessage('<html>Bad Gateway</html>'), '<html>Bad Gateway</html>');
    assert.equal(serviceMessage('x'.repeat(900)).length, 500);
  });

  it('reads Retry-After in seconds or as a date', () => {
    assert.equal(retryAfterMs(headers({ 'retry-after': '0' })), 0);
    assert.equal(retryAfterMs(headers({ 'retry-after': 'soon' })), undefined);
    assert.equal(retryAfterMs(headers()), undefined);
    const inAMinute = new Date(Date.now() + 60_000).toUTCString();
    const ms = retryAfterMs(headers({ 'retry-after': inAMinute }))!;
    assert.ok(ms > 50_000 && ms <= 60_000, String(ms));
  });
});

describe('integration HTTP: base URLs', () => {
  it('replaces the default exactly, prefix kept, trailing slash dropped; Reddit auth falls back to the API base', async () => {
    assert.equal(await baseUrlOf(ctxWith({}), SERVICES.github), 'https://api.github.com');
    assert.equal(
      await baseUrlOf(ctxWith({ GITHUB_API_BASE: 'http://127.0.0.1:9/ghe/api/v3/' }), SERVICES.github),
      'http://127.0.0.1:9/ghe/api/v3',
    );
    assert.equal(
      await baseUrlOf(ctxWith({ REDDIT_API_BASE: 'http://127.0.0.1:9/r' }), SERVICES.redditAuth),
      'http://127.0.0.1:9/r',
    );
    assert.equal(
      await baseUrlOf(ctxWith({ REDDIT_API_BASE: 'http://a', REDDIT_AUTH_BASE: 'http://b' }), SERVICES.redditAuth),
      'http://b',
    );
  });

  it('refuses a base that is not an http(s) URL, naming the variable', async () => {
    for (const bad of ['ftp://x', 'not a url', 'http://x/?q=1']) {
      await assert.rejects(
        baseUrlOf(ctxWith({ SLACK_API_BASE: bad }), SERVICES.slackBot),
        /SLACK_API_BASE must be an http\(s\) base URL/,
      );
    }
  });
});

describe('integration nodes: input parsing', () => {
  it('GitHub repo names, as owner/repo or a URL', () => {
    assert.equal(repoPath('octo/hello'), '/repos/octo/hello');
    assert.equal(repoPath('https://github.com/octo/hello.git'), '/repos/octo/hello');
    assert.throws(() => repoPath('octo'), /owner\/repo/);
    assert.throws(() => repoPath('a/b/c'), /owner\/repo/);
  });

  it('YouTube ids from every URL form, English captions first', () => {
    for (const url of [
      'dQw4w9WgXcQ',
      'https://www.youtube.com/watch?v=dQw4w9WgXcQ&t=3',
      'https://youtu.be/dQw4w9WgXcQ',
      'https://www.youtube.com/shorts/dQw4w9WgXcQ',
      'https://www.youtube.com/embed/dQw4w9WgXcQ',
    ]) {
      assert.equal(videoIdOf(url), 'dQw4w9WgXcQ', url);
    }
    assert.throws(() => videoIdOf('https://example.org/'), /No video id/);
    assert.deepEqual(
      preferredTrack([{ languageCode: 'de' }, { languageCode: 'en', kind: 'asr' }, { languageCode: 'en-GB' }]),
      { languageCode: 'en-GB' },
    );
    assert.deepEqual(preferredTrack([{ languageCode: 'de' }, { languageCode: 'fr' }]), { languageCode: 'de' });
  });

  it("e-mail recipients: one address or PySpur's list form", () => {
    assert.deepEqual(emailAddresses(' a@x.org '), ['a@x.org']);
    assert.deepEqual(emailAddresses(`['a@x.org', "b@x.org"]`), ['a@x.org', 'b@x.org']);
    assert.deepEqual(emailAddresses('[]'), []);
  });

  it('an empty template takes the first string of the input, a top-level one before a field', async () => {
    assert.equal(await renderOrFirstString('', { in: { url: 'https://a' } }, 'url_template'), 'https://a');
    assert.equal(await renderOrFirstString('  ', { a: 'top', in: { url: 'https://a' } }, 'url_template'), 'top');
    assert.equal(
      await renderOrFirstString('{{in.url}}/x', { in: { url: 'https://a' } }, 'url_template'),
      'https://a/x',
    );
    await assert.rejects(() => renderOrFirstString('', { in: { n: 1 } }, 'url_template'), /url_template is empty/);
  });
});

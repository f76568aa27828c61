import assert from 'node:assert/strict';
import { startEngine, waitForRun, type Engine } from '../support/engine';
import type { ServiceName } from '../support/fake-service-routes';
import { type FakeReply, type FakeServices, startFakeServices } from '../support/fake-services';
import { l, n } from '../support/graphs';
import { AUTH, SUCCESS_CASES } from '../support/integration-cases';
import { CREDENTIALS, fakeBases, runNode, setEnv, unsetEnv } from '../support/integration-runs';

const CALL = /^(GET|POST) (\S+) (\S+)$/;

describe('e2e: integration nodes against local servers speaking their services’ APIs', function () {
  this.timeout(180_000);
  let engine: Engine;
  let fake: FakeServices;
  before(async () => {
    engine = await startEngine();
    fake = await startFakeServices();
    await setEnv(engine, { ...fakeBases(fake), ...CREDENTIALS });
  });
  after(async () => {
    await engine?.close();
    await fake?.close();
  });

  it('env management: every integration variable is settable, listed masked (base URLs in clear) and deletable; providers show them', async () => {
    const providers = (await engine.http.get('/env-mgmt/providers')).body as {
      id: string;
      parameters: { name: string }[];
    }[];
    const listed = new Set(providers.flatMap((p) => p.parameters.map((param) => param.name)));
    const names = new Set((await engine.http.get('/env-mgmt/')).body as string[]);
    for (const name of Object.keys(CREDENTIALS)) {
      assert.ok(listed.has(name) && names.has(name), `${name} is listed by a provider and by GET /env-mgmt/`);
      const shown = (await engine.http.get(`/env-mgmt/${name}`)).body.value as string;
      const secret = CREDENTIALS[name]!;
      if (name === 'REDDIT_USERNAME' || name === 'REDDIT_USER_AGENT')
        assert.equal(shown, secret, `${name} is a text setting`);
      else
        assert.ok(
          shown !== secret && shown.length === secret.length && /\*/.test(shown),
          `${name} is masked: ${shown}`,
        );
    }
    for (const [name, value] of Object.entries(fakeBases(fake)))
      assert.equal((await engine.http.get(`/env-mgmt/${name}`)).body.value, value, name);
    for (const name of ['SENDGRID_API_KEY', 'SENDGRID_API_BASE']) {
      assert.equal((await engine.http.delete(`/env-mgmt/${name}`)).status, 200, name);
      assert.equal((await engine.http.get(`/env-mgmt/${name}`)).body.value, '', name);
    }
    await setEnv(engine, { SENDGRID_API_BASE: fake.base('sendgrid'), SENDGRID_API_KEY: CREDENTIALS.SENDGRID_API_KEY! });
  });

  describe('each node: method, path and auth, and an output built from the answer', () => {
    for (const c of SUCCESS_CASES) {
      it(`${c.type} ${JSON.stringify(c.config)}`, async () => {
        const from = fake.requests.length;
        const run = await runNode(engine, c.type, c.config, c.inputs);
        assert.equal(run.status, 'COMPLETED', `${run.message} ${JSON.stringify(run.task)}`);
        const made = fake.requests.slice(from);
        const shown = made.map((r) => `${r.method} ${r.service} ${r.path}`).join('\n');
        let at = 0;
        for (const call of c.calls) {
          const [, method, service, path] = CALL.exec(call)!;
          const i = made.findIndex(
            (r, k) => k >= at && r.method === method && r.service === service && new RegExp(path!).test(r.path),
          );
          assert.ok(i >= 0, `expected ${call} among:\n${shown}`);
          at = i + 1;
        }
        for (const r of made)
          assert.ok(
            AUTH[r.service](r.headers),
            `auth of ${r.method} ${r.service} ${r.path}: ${JSON.stringify(r.headers)}`,
          );
        c.check(run.output, fake);
      });
    }

    it('JinaReaderNode without JINA_API_KEY (optional) sends no Authorization', async () => {
      await unsetEnv(engine, 'JINA_API_KEY');
      try {
        const run = await runNode(engine, 'JinaReaderNode', {
          url_template: 'https://r.jina.ai/https://example.com',
          use_readerlm_v2: false,
        });
        assert.equal(run.status, 'COMPLETED', run.message ?? '');
        const req = fake.to('jina').at(-1)!;
        assert.equal(
          req.path,
          '/https://example.com',
          'the default https://r.jina.ai/ prefix is replaced by JINA_API_BASE',
        );
        assert.equal(req.headers.authorization, undefined);
        assert.equal(req.headers['x-respond-with'], undefined);
      } finally {
        await setEnv(engine, { JINA_API_KEY: CREDENTIALS.JINA_API_KEY! });
      }
    });
  });

  describe('a missing credential fails the task naming the variable, before any request', () => {
    const cases: [string, Record<string, unknown>, string, ServiceName][] = [
      ['GitHubGetRepositoryNode', { repo_name: 'o/r' }, 'GITHUB_ACCESS_TOKEN', 'github'],
      ['SlackNotifyNode', { channel: 'C1' }, 'SLACK_BOT_TOKEN', 'slack'],
      ['SlackNotifyNode', { channel: 'C1', mode: 'user' }, 'SLACK_USER_TOKEN', 'slack'],
      ['FirecrawlScrapeNode', { url_template: 'https://example.org' }, 'FIRECRAWL_API_KEY', 'firecrawl'],
      ['FirecrawlCrawlNode', { url_template: 'https://example.org' }, 'FIRECRAWL_API_KEY', 'firecrawl'],
      ['ExaSearchNode', { query_template: 'q' }, 'EXA_API_KEY', 'exa'],
      ['GoogleSheetsReadNode', { spreadsheet_id: 's', range: 'A1:B2' }, 'GOOGLE_ACCESS_TOKEN', 'google-sheets'],
      ['RedditGetUserInfoNode', { username: 'u' }, 'REDDIT_CLIENT_ID', 'reddit-auth'],
      ['RedditGetTopPostsNode', { subreddit: 's' }, 'REDDIT_CLIENT_SECRET', 'reddit-auth'],
      ['RedditCreatePostNode', { subreddit: 's', title: 't' }, 'REDDIT_USERNAME', 'reddit-auth'],
      [
        'SendEmailNode',
        { from_template: 'a@x.org', to_template: 'b@x.org', subject_template: 's', content_template: 'c' },
        'RESEND_API_KEY',
        'resend',
      ],
      [
        'SendEmailNode',
        {
          provider: 'sendgrid',
          from_template: 'a@x.org',
          to_template: 'b@x.org',
          subject_template: 's',
          content_template: 'c',
        },
        'SENDGRID_API_KEY',
        'sendgrid',
      ],
    ];
    for (const [type, config, variable, service] of cases) {
      it(`${type} without ${variable}`, async () => {
        await unsetEnv(engine, variable);
        try {
          const before = fake.to(service).length;
          const run = await runNode(engine, type, config);
          assert.equal(run.status, 'FAILED');
          assert.equal(run.task.status, 'FAILED');
          assert.match(String(run.task.error), new RegExp(`${variable} is not set`));
          assert.equal(fake.to(service).length, before, 'no request was sent');
        } finally {
          await setEnv(engine, { [variable]: CREDENTIALS[variable]! });
        }
      });
    }
  });

  describe("a service error fails the task with the service's own message, not retried", () => {
    const email = { from_template: 'a@x.org', to_template: 'b@x.org', subject_template: 's', content_template: 'c' };
    const cases: {
      type: string;
      config: Record<string, unknown>;
      service: ServiceName;
      path: RegExp;
      reply?: FakeReply;
      message: RegExp;
    }[] = [
      {
        type: 'GitHubGetRepositoryNode',
        config: { repo_name: 'o/r' },
        service: 'github',
        path: /^\/repos\/o\/r$/,
        reply: { status: 404, json: { message: 'Not Found', documentation_url: 'https://docs.github.com' } },
        message: /^GitHub API error 404: Not Found$/,
      },
      {
        type: 'SlackNotifyNode',
        config: { channel: 'C-missing', message: 'x' },
        service: 'slack',
        path: /chat/,
        message: /^Slack API error: channel_not_found$/,
      },
      {
        type: 'FirecrawlScrapeNode',
        config: { url_template: 'https://e.org' },
        service: 'firecrawl',
        path: /scrape/,
        reply: { status: 401, json: { success: false, error: 'Unauthorized: Invalid token' } },
        message: /^Firecrawl API error 401: Unauthorized: Invalid token$/,
      },
      {
        type: 'FirecrawlCrawlNode',
        config: { url_template: 'https://e.org' },
        service: 'firecrawl',
        path: /^\/v1\/crawl\//,
        reply: { json: { status: 'failed', error: 'Site blocked crawling' } },
        message: /^Firecrawl API error: crawl crawl-\d+ failed: Site blocked crawling$/,
      },
      {
        type: 'ExaSearchNode',
        config: { query_template: 'q' },
        service: 'exa',
        path: /search/,
        reply: { status: 401, json: { error: 'Invalid API key' } },
        message: /^Exa API error 401: Invalid API key$/,
      },
      {
        type: 'JinaReaderNode',
        config: { url_template: 'https://e.org' },
        service: 'jina',
        path: /./,
        reply: { status: 451, json: { code: 451, name: 'SecurityCompromiseError', message: 'Domain e.org blocked' } },
        message: /^Jina Reader API error 451: Domain e.org blocked$/,
      },
      {
        type: 'GoogleSheetsReadNode',
        config: { spreadsheet_id: 's', range: 'A1' },
        service: 'google-sheets',
        path: /values/,
        reply: {
          status: 403,
          json: { error: { code: 403, message: 'The caller does not have permission', status: 'PERMISSION_DENIED' } },
        },
        message: /^Google Sheets API error 403: The caller does not have permission$/,
      },
      {
        type: 'YouTubeTranscriptNode',
        config: { video_url_template: 'https://youtu.be/dQw4w9WgXcQ' },
        service: 'youtube',
        path: /player/,
        reply: { json: { playabilityStatus: { status: 'ERROR', reason: 'Video unavailable' } } },
        message: /^YouTube API error: video dQw4w9WgXcQ is not playable \(ERROR: Video unavailable\)$/,
      },
      {
        type: 'RedditGetUserInfoNode',
        config: { username: 'ghost' },
        service: 'reddit',
        path: /^\/user\/ghost\/about$/,
        reply: { status: 404, json: { message: 'Not Found', error: 404 } },
        message: /^Reddit API error 404: Not Found$/,
      },
      {
        type: 'RedditCreatePostNode',
        config: { subreddit: 'nope', title: 't' },
        service: 'reddit',
        path: /submit/,
        reply: { json: { json: { errors: [['SUBREDDIT_NOEXIST', "that subreddit doesn't exist", 'sr']] } } },
        message: /^Reddit API error: SUBREDDIT_NOEXIST: that subreddit doesn't exist: sr$/,
      },
      {
        type: 'SendEmailNode',
        config: email,
        service: 'resend',
        path: /emails/,
        reply: { status: 422, json: { statusCode: 422, message: 'Invalid `to` field.', name: 'validation_error' } },
        message: /^Resend API error 422: Invalid `to` field\.$/,
      },
      {
        type: 'SendEmailNode',
        config: { ...email, provider: 'sendgrid' },
        service: 'sendgrid',
        path: /send/,
        reply: {
          status: 401,
          json: {
            errors: [{ message: 'The provided authorization grant is invalid, expired, or revoked', field: null }],
          },
        },
        message: /^SendGrid API error 401: The provided authorization grant is invalid, expired, or revoked$/,
      },
    ];
    for (const c of cases) {
      it(`${c.type}: ${c.message.source}`, async () => {
        if (c.reply) fake.failNext(c.service, c.path, c.reply);
        const before = fake.to(c.service, undefined, c.path).length;
        const run = await runNode(engine, c.type, c.config);
        assert.equal(run.status, 'FAILED', JSON.stringify(run.output));
        assert.match(String(run.task.error), c.message);
        assert.equal(fake.to(c.service, undefined, c.path).length - before, 1, 'asked once: a refusal is not retried');
      });
    }

    it('Reddit refusing the account (200 with invalid_grant) fails the task', async () => {
      await setEnv(engine, { REDDIT_PASSWORD: 'wrong' });
      try {
        const run = await runNode(engine, 'RedditCreatePostNode', { subreddit: 's', title: 't' });
        assert.equal(run.status, 'FAILED');
        assert.match(String(run.task.error), /^Reddit API error: authentication failed \(invalid_grant\)$/);
      } finally {
        await setEnv(engine, { REDDIT_PASSWORD: CREDENTIALS.REDDIT_PASSWORD! });
      }
    });
  });

  describe('retries: only 5xx, 429 with Retry-After and network errors', () => {
    const repo = /^\/repos\/retry\/me$/;
    const attempts = () => fake.to('github', 'GET', repo).length;

    it('a 503, then success: retried, completes', async () => {
      const before = attempts();
      fake.failNext('github', repo, { status: 503, json: { message: 'Service Unavailable' } });
      const run = await runNode(engine, 'GitHubGetRepositoryNode', { repo_name: 'retry/me' });
      assert.equal(run.status, 'COMPLETED', run.message ?? '');
      assert.equal(attempts() - before, 2);
    });

    it('a 429 with Retry-After: retried after it, completes', async () => {
      const before = attempts();
      fake.failNext('github', repo, {
        status: 429,
        headers: { 'retry-after': '1' },
        json: { message: 'API rate limit exceeded' },
      });
      const run = await runNode(engine, 'GitHubGetRepositoryNode', { repo_name: 'retry/me' });
      assert.equal(run.status, 'COMPLETED', run.message ?? '');
      assert.equal(attempts() - before, 2);
    });

    it('a 429 without Retry-After: fails at once', async () => {
      const before = attempts();
      fake.failNext('github', repo, { status: 429, json: { message: 'API rate limit exceeded' } });
      const run = await runNode(engine, 'GitHubGetRepositoryNode', { repo_name: 'retry/me' });
      assert.equal(run.status, 'FAILED');
      assert.match(
        String(run.task.error),
        /^GitHub API error 429: API rate limit exceeded \(no Retry-After, so not retried\)$/,
      );
      assert.equal(attempts() - before, 1);
    });

    it('5xx every time: tried max_retries + 1 times, then fails with the last message', async () => {
      const before = attempts();
      fake.failNext(
        'github',
        repo,
        { status: 502, json: { message: 'Bad Gateway' } },
        { status: 500, json: { message: 'Server Error' } },
      );
      const run = await runNode(engine, 'GitHubGetRepositoryNode', { repo_name: 'retry/me', max_retries: 1 });
      assert.equal(run.status, 'FAILED');
      assert.match(String(run.task.error), /^GitHub API error 500: Server Error$/);
      assert.equal(attempts() - before, 2);
    });

    it('a refused connection is a network error: retried, then fails naming the service', async () => {
      // Port 1: nothing listens there, and unlike a port just closed no other test's server can take it meanwhile.
      const deadBase = 'http://127.0.0.1:1/github';
      // The token is entered again for the new base: a key is used only with the base it was entered under.
      await setEnv(engine, { GITHUB_API_BASE: deadBase, GITHUB_ACCESS_TOKEN: CREDENTIALS.GITHUB_ACCESS_TOKEN! });
      try {
        const run = await runNode(engine, 'GitHubGetRepositoryNode', { repo_name: 'o/r', max_retries: 1 });
        assert.equal(run.status, 'FAILED');
        assert.match(String(run.task.error), /^GitHub request failed: .*ECONNREFUSED/);
      } finally {
        await setEnv(engine, {
          GITHUB_API_BASE: fake.base('github'),
          GITHUB_ACCESS_TOKEN: CREDENTIALS.GITHUB_ACCESS_TOKEN!,
        });
      }
    });
  });

  describe("Reddit's OAuth token", () => {
    it('is fetched once and reused until it expires; a short-lived one is renewed', async () => {
      // A client id of its own, so tokens cached by earlier tests do not count.
      await setEnv(engine, { REDDIT_CLIENT_ID: 'reddit-cache-client' });
      try {
        const tokens = () => fake.to('reddit-auth').length;
        const before = tokens();
        for (let i = 0; i < 3; i++)
          assert.equal((await runNode(engine, 'RedditGetUserInfoNode', { username: 'u' })).status, 'COMPLETED');
        assert.equal(tokens() - before, 1, 'three runs, one token');
        fake.failNext('reddit-auth', /access_token/, {
          json: { access_token: 'token-short', token_type: 'bearer', expires_in: 1 },
        });
        await setEnv(engine, { REDDIT_CLIENT_ID: 'reddit-cache-client-2' });
        assert.equal((await runNode(engine, 'RedditGetUserInfoNode', { username: 'u' })).status, 'COMPLETED');
        assert.equal((await runNode(engine, 'RedditGetUserInfoNode', { username: 'u' })).status, 'COMPLETED');
        assert.equal(tokens() - before, 3, 'a token already expiring is not reused');
        fake.failNext('reddit', /^\/user\/u\/about$/, { status: 401, json: { message: 'Unauthorized', error: 401 } });
        assert.equal((await runNode(engine, 'RedditGetUserInfoNode', { username: 'u' })).status, 'COMPLETED');
        assert.equal(tokens() - before, 4, 'a cached token Reddit refuses is replaced once');
      } finally {
        await setEnv(engine, { REDDIT_CLIENT_ID: CREDENTIALS.REDDIT_CLIENT_ID! });
      }
    });
  });

  it("PySpur's Google sign-in endpoints store the token the Sheets node then sends", async () => {
    const stored = await engine.http.post('/google/store_token/', {
      access_token: 'ya29.from-the-ui',
      expires_in: 3599,
    });
    assert.deepEqual([stored.status, stored.body], [200, { message: 'Token stored successfully!' }]);
    assert.deepEqual((await engine.http.get('/google/validate_token/')).body, { is_valid: true });
    assert.match((await engine.http.get('/env-mgmt/GOOGLE_ACCESS_TOKEN')).body.value, /^ya29\*+e-ui$/, 'listed masked');
    try {
      const run = await runNode(engine, 'GoogleSheetsReadNode', { spreadsheet_id: 'sheet-2', range: 'A1:B2' });
      assert.equal(run.status, 'COMPLETED', run.message ?? '');
      assert.equal(fake.to('google-sheets').at(-1)!.headers.authorization, 'Bearer ya29.from-the-ui');
      await engine.http.post('/google/store_token/', { access_token: 'ya29.old', expires_in: -1 });
      assert.deepEqual((await engine.http.get('/google/validate_token/')).body, { is_valid: false });
      assert.equal((await engine.http.post('/google/store_token/', { access_token: '' })).status, 422);
    } finally {
      await setEnv(engine, { GOOGLE_ACCESS_TOKEN: CREDENTIALS.GOOGLE_ACCESS_TOKEN! });
    }
  });

  it('cancelling the run aborts the outbound request', async () => {
    fake.failNext('github', /^\/repos\/slow\/call$/, { hang: true });
    const definition = {
      nodes: [
        n('in', 'InputNode', { output_schema: { x: 'string' } }),
        n('node', 'GitHubGetRepositoryNode', { repo_name: 'slow/call', heartbeat_timeout_seconds: 3 }),
      ],
      links: [l('in', 'node')],
    };
    const wf = (await engine.http.post('/wf/', { name: `cancel-${Math.random()}`, definition })).body;
    const started = (await engine.http.post(`/wf/${wf.id}/start_run/`, { initial_inputs: { in: { x: 'y' } } })).body;
    const deadline = Date.now() + 60_000;
    const request = async () => {
      for (;;) {
        const found = fake.to('github', 'GET', /^\/repos\/slow\/call$/).at(-1);
        if (found) return found;
        if (Date.now() > deadline) throw new Error('the request never arrived');
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    const pending = await request();
    assert.equal((await engine.http.post(`/wf/cancel_workflow/${started.id}/`)).status, 200);
    const run = await waitForRun(engine.http, started.id, undefined, 60_000);
    assert.equal(run.status, 'CANCELED');
    while (!pending.abandoned) {
      if (Date.now() > deadline) throw new Error('the request was never aborted');
      await new Promise((r) => setTimeout(r, 50));
    }
  });
});

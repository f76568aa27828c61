import type { FakeReply, ServiceRequest } from './fake-services';

/** What the fake remembers between requests. */
export interface FakeState {
  /** A crawl answers `scraping` to this many polls, then `completed` (Infinity: until changed). */
  crawlCompleteAfterPolls: number;
  crawls: Map<string, { url: string; polls: number }>;
  tokensIssued: number;
}

type Handler = (req: ServiceRequest, state: FakeState, match: RegExpMatchArray) => FakeReply;
interface Route {
  method: 'GET' | 'POST';
  path: RegExp;
  reply: Handler;
}
const route = (method: Route['method'], path: RegExp, reply: Handler): Route => ({ method, path, reply });
const ok = (json: unknown, status = 200): FakeReply => ({ status, json });

const repo = (fullName: string) => ({
  full_name: fullName,
  description: 'A test repository',
  html_url: `https://github.com/${fullName}`,
  stargazers_count: 42,
  forks_count: 7,
  open_issues_count: 3,
  language: 'TypeScript',
  license: { key: 'mit', name: 'MIT License' },
  default_branch: 'main',
});
const pull = (n: number) => ({
  number: n,
  title: `PR ${n}`,
  user: { login: 'octocat' },
  body: 'Fixes things',
  created_at: '2025-01-02T03:04:05Z',
  updated_at: '2025-01-03T00:00:00Z',
  state: 'open',
  mergeable: true,
  html_url: `https://github.com/octo/hello/pull/${n}`,
});
const post = (id: string, title: string, extra: Record<string, unknown> = {}) => ({
  kind: 't3',
  data: {
    id,
    name: `t3_${id}`,
    title,
    score: 10,
    url: `https://www.reddit.com/r/test/comments/${id}/`,
    author: 'poster',
    created_utc: 1700000000,
    num_comments: 4,
    permalink: `/r/test/comments/${id}/`,
    is_self: true,
    selftext: 'body text',
    link_flair_text: null,
    ...extra,
  },
});
const subreddit = (name: string) => ({
  kind: 't5',
  data: {
    display_name: name,
    title: `All about ${name}`,
    description: 'long description',
    public_description: 'short',
    subscribers: 1234,
    active_user_count: 56,
    created_utc: 1200000000,
    over18: false,
    url: `/r/${name}/`,
  },
});
const listing = (children: unknown[]) => ({ kind: 'Listing', data: { after: null, children } });
const caption = (lang: string) => ({
  baseUrl: `https://www.youtube.com/api/timedtext?v=dQw4w9WgXcQ&lang=${lang}&fmt=srv3`,
  languageCode: lang,
  kind: lang === 'en' ? 'asr' : undefined,
});

/** Each service's answers, shaped like the real API's (only the fields the nodes read, and a few more). */
export const SERVICE_ROUTES = {
  github: [
    route('GET', /^\/user\/repos$/, (req) =>
      req.query.get('page') === '2'
        ? ok([repo('octo/world')])
        : {
            json: [repo('octo/hello')],
            headers: {
              link: '<https://api.github.com/user/repos?per_page=100&page=2>; rel="next", <https://api.github.com/user/repos?per_page=100&page=2>; rel="last"',
            },
          },
    ),
    route('GET', /^\/repos\/[^/]+\/[^/]+$/, (req) => ok(repo(req.path.split('/').slice(2).join('/')))),
    route('GET', /^\/repos\/[^/]+\/[^/]+\/pulls$/, () => ok([pull(1), pull(2)])),
    route('GET', /^\/repos\/[^/]+\/[^/]+\/pulls\/(\d+)$/, (_r, _s, m) => ok(pull(Number(m[1])))),
    route('GET', /^\/repos\/[^/]+\/[^/]+\/pulls\/(\d+)\/merge$/, (_r, _s, m) =>
      m[1] === '1' ? { status: 204 } : ok({ message: 'Not Found' }, 404),
    ),
    route('GET', /^\/repos\/[^/]+\/[^/]+\/pulls\/\d+\/files$/, () =>
      ok([
        {
          filename: 'src/a.ts',
          status: 'modified',
          additions: 3,
          deletions: 1,
          changes: 4,
          raw_url: 'https://raw/a',
          blob_url: 'https://blob/a',
          patch: '@@ -1 +1 @@',
        },
      ]),
    ),
    route('GET', /^\/search\/repositories$/, () =>
      ok({ total_count: 3, items: [repo('a/one'), repo('b/two'), repo('c/three')] }),
    ),
    route('POST', /^\/repos\/[^/]+\/[^/]+\/issues$/, (req) =>
      ok(
        {
          id: 99,
          number: 12,
          title: req.body.title,
          body: req.body.body ?? null,
          html_url: 'https://github.com/octo/hello/issues/12',
          state: 'open',
          created_at: '2025-02-03T04:05:06Z',
          user: { login: 'octocat' },
        },
        201,
      ),
    ),
  ],
  slack: [
    route('POST', /^\/chat\.postMessage$/, (req) =>
      req.body.channel === 'C-missing'
        ? ok({ ok: false, error: 'channel_not_found' })
        : ok({ ok: true, channel: req.body.channel, ts: '1700000000.000100' }),
    ),
  ],
  firecrawl: [
    route('POST', /^\/v1\/scrape$/, (req) =>
      ok({ success: true, data: { markdown: `# Scraped ${req.body.url}`, metadata: { sourceURL: req.body.url } } }),
    ),
    route('POST', /^\/v1\/crawl$/, (req, state) => {
      const id = `crawl-${state.crawls.size + 1}`;
      state.crawls.set(id, { url: req.body.url, polls: 0 });
      return ok({ success: true, id, url: `https://api.firecrawl.dev/v1/crawl/${id}` });
    }),
    route('GET', /^\/v1\/crawl\/([^/]+)$/, (req, state, m) => {
      const crawl = state.crawls.get(m[1]!);
      if (!crawl) return ok({ success: false, error: 'Crawl job not found' }, 404);
      if (req.query.get('skip') === '1')
        return ok({
          status: 'completed',
          total: 2,
          completed: 2,
          data: [{ markdown: '# Page 2', metadata: { sourceURL: `${crawl.url}/2` } }],
        });
      if (++crawl.polls <= state.crawlCompleteAfterPolls)
        return ok({ status: 'scraping', total: 2, completed: 0, data: [] });
      return ok({
        status: 'completed',
        total: 2,
        completed: 2,
        data: [{ markdown: '# Page 1', metadata: { sourceURL: crawl.url } }],
        next: `https://api.firecrawl.dev/v1/crawl/${m[1]}?skip=1`,
      });
    }),
  ],
  exa: [
    route('POST', /^\/search$/, (req) =>
      ok({
        results: [
          {
            id: 'r1',
            title: `About ${req.body.query}`,
            url: 'https://example.org/1',
            score: 0.9,
            publishedDate: '2024-05-01',
            author: 'Ann',
            ...(req.body.contents ? { text: 'page text' } : {}),
          },
          { id: 'r2', title: null, url: 'https://example.org/2' },
        ],
      }),
    ),
  ],
  jina: [
    route('GET', /^\/.+/, (req) =>
      ok({
        code: 200,
        status: 20000,
        data: {
          title: 'Example Domain',
          content: '```markdown\n# Example\n\nRead ' + req.path.slice(1) + '\n```',
          url: req.path.slice(1),
        },
      }),
    ),
  ],
  'google-sheets': [
    route('GET', /^\/v4\/spreadsheets\/[^/]+\/values\/[^/]+$/, (req) =>
      ok({
        range: decodeURIComponent(req.path.split('/').pop()!),
        majorDimension: 'ROWS',
        values: [
          ['name', 'qty'],
          ['apple', '3'],
        ],
      }),
    ),
  ],
  youtube: [
    route('GET', /^\/watch$/, () => ({
      text: '<html><script>ytcfg.set({"INNERTUBE_API_KEY": "fake-player-key"});</script></html>',
    })),
    route('POST', /^\/youtubei\/v1\/player$/, () =>
      ok({
        playabilityStatus: { status: 'OK' },
        captions: { playerCaptionsTracklistRenderer: { captionTracks: [caption('de'), caption('en')] } },
      }),
    ),
    route('GET', /^\/api\/timedtext$/, (req) => ({
      text: `<?xml version="1.0" encoding="utf-8" ?><transcript><text start="0" dur="1.5">${req.query.get('lang') === 'en' ? 'Hello &amp;amp; welcome' : 'Hallo'}</text><text start="1.5" dur="2">it&amp;#39;s a &lt;test&gt;</text></transcript>`,
    })),
  ],
  'reddit-auth': [
    route('POST', /^\/api\/v1\/access_token$/, (req, state) =>
      req.body.password === 'wrong'
        ? ok({ error: 'invalid_grant' })
        : ok({ access_token: `token-${++state.tokensIssued}`, token_type: 'bearer', expires_in: 3600, scope: '*' }),
    ),
  ],
  reddit: [
    route('GET', /^\/r\/[^/]+\/top$/, () =>
      ok(
        listing([
          post('a1', 'Top one'),
          post('a2', 'A link', { is_self: false, selftext: '', url: 'https://example.org' }),
        ]),
      ),
    ),
    route('GET', /^\/r\/[^/]+\/new$/, () =>
      ok(
        listing([
          post('n1', 'New 1', { num_comments: 2, score: 5 }),
          post('n2', 'New 2', { num_comments: 4, score: 15 }),
        ]),
      ),
    ),
    route('GET', /^\/r\/([^/]+)\/about$/, (_r, _s, m) => ok(subreddit(m[1]!))),
    route('GET', /^\/r\/[^/]+\/api\/link_flair_v2$/, () =>
      ok([
        { id: 'flair-1', text: 'Discussion' },
        { id: 'flair-2', text: 'News' },
      ]),
    ),
    route('GET', /^\/user\/([^/]+)\/about$/, (_r, _s, m) =>
      ok({
        kind: 't2',
        data: {
          name: m[1],
          comment_karma: 100,
          link_karma: 20,
          is_mod: false,
          is_gold: true,
          is_employee: false,
          created_utc: 1300000000,
        },
      }),
    ),
    route('GET', /^\/subreddits\/popular$/, () => ok(listing([subreddit('pics'), subreddit('news')]))),
    route('POST', /^\/api\/submit$/, () =>
      ok({
        json: { errors: [], data: { id: 'p9', name: 't3_p9', url: 'https://www.reddit.com/r/test/comments/p9/' } },
      }),
    ),
    route('GET', /^\/by_id\/t3_p9$/, () =>
      ok(listing([post('p9', 'My post', { author: 'spur_bot', link_flair_text: 'News' })])),
    ),
  ],
  resend: [route('POST', /^\/emails$/, () => ok({ id: 're_0123456789' }))],
  sendgrid: [route('POST', /^\/v3\/mail\/send$/, () => ({ status: 202, headers: { 'x-message-id': 'sg-msg-1' } }))],
} satisfies Record<string, Route[]>;

export type ServiceName = keyof typeof SERVICE_ROUTES;

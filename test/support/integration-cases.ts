import assert from 'node:assert/strict';
import type { IncomingHttpHeaders } from 'node:http';
import type { FakeServices } from './fake-services';
import type { ServiceName } from './fake-service-routes';
import type { Cfg } from './graphs';
import { CREDENTIALS } from './integration-runs';

/** How each fake service expects to be authenticated (what the real one checks). */
export const AUTH: Record<ServiceName, (h: IncomingHttpHeaders) => boolean> = {
  github: (h) =>
    h.authorization === `Bearer ${CREDENTIALS.GITHUB_ACCESS_TOKEN}` && h.accept === 'application/vnd.github+json',
  slack: (h) =>
    h.authorization === `Bearer ${CREDENTIALS.SLACK_BOT_TOKEN}` ||
    h.authorization === `Bearer ${CREDENTIALS.SLACK_USER_TOKEN}`,
  firecrawl: (h) => h.authorization === `Bearer ${CREDENTIALS.FIRECRAWL_API_KEY}`,
  exa: (h) => h['x-api-key'] === CREDENTIALS.EXA_API_KEY,
  jina: (h) => h.authorization === `Bearer ${CREDENTIALS.JINA_API_KEY}` && h.accept === 'application/json',
  'google-sheets': (h) => h.authorization === `Bearer ${CREDENTIALS.GOOGLE_ACCESS_TOKEN}`,
  youtube: (h) => h.authorization === undefined,
  'reddit-auth': (h) =>
    h.authorization ===
      `Basic ${Buffer.from(`${CREDENTIALS.REDDIT_CLIENT_ID}:${CREDENTIALS.REDDIT_CLIENT_SECRET}`).toString('base64')}` &&
    h['user-agent'] === CREDENTIALS.REDDIT_USER_AGENT,
  reddit: (h) =>
    /^bearer token-\d+$/.test(String(h.authorization)) && h['user-agent'] === CREDENTIALS.REDDIT_USER_AGENT,
  resend: (h) => h.authorization === `Bearer ${CREDENTIALS.RESEND_API_KEY}`,
  sendgrid: (h) => h.authorization === `Bearer ${CREDENTIALS.SENDGRID_API_KEY}`,
};

export interface SuccessCase {
  type: string;
  config: Cfg;
  inputs?: Record<string, unknown>;
  /** Requests the node must make, in order (`METHOD service /path`, the path as a regex source). */
  calls: string[];
  check(output: any, fake: FakeServices): void;
}

const json = (text: string) => JSON.parse(text);

export const SUCCESS_CASES: SuccessCase[] = [
  {
    type: 'GitHubListPullRequestsNode',
    config: { repo_name: 'octo/hello', state: 'closed' },
    calls: ['GET github /repos/octo/hello/pulls'],
    check: (o, fake) => {
      assert.equal(fake.to('github').at(-1)!.query.get('state'), 'closed');
      assert.deepEqual(json(o.pull_requests)[0], {
        number: 1,
        title: 'PR 1',
        user: 'octocat',
        created_at: '2025-01-02T03:04:05+00:00',
        state: 'open',
        url: 'https://github.com/octo/hello/pull/1',
      });
    },
  },
  {
    type: 'GitHubListRepositoriesNode',
    config: {},
    calls: ['GET github /user/repos', 'GET github /user/repos'],
    check: (o, fake) => {
      assert.equal(
        fake.to('github').at(-1)!.query.get('page'),
        '2',
        'the Link header was followed, on the configured base',
      );
      assert.deepEqual(json(o.repositories), ['octo/hello', 'octo/world']);
    },
  },
  {
    type: 'GitHubGetRepositoryNode',
    config: { repo_name: 'octo/hello' },
    calls: ['GET github /repos/octo/hello$'],
    check: (o) =>
      assert.deepEqual(json(o.repository_details), {
        name: 'octo/hello',
        description: 'A test repository',
        url: 'https://github.com/octo/hello',
        stars: 42,
        forks: 7,
        open_issues: 3,
        language: 'TypeScript',
        license: 'MIT License',
        default_branch: 'main',
      }),
  },
  {
    type: 'GitHubSearchRepositoriesNode',
    config: { query: 'machine learning', per_page: 2 },
    calls: ['GET github /search/repositories'],
    check: (o, fake) => {
      const q = fake.to('github').at(-1)!.query;
      assert.deepEqual(
        [q.get('q'), q.get('sort'), q.get('order'), q.get('per_page')],
        ['machine learning', 'stars', 'desc', '2'],
      );
      assert.deepEqual(
        json(o.repositories).map((r: { full_name: string }) => r.full_name),
        ['a/one', 'b/two'],
      );
    },
  },
  {
    type: 'GitHubGetPullRequestNode',
    config: { repo_name: 'octo/hello', pr_number: '1' },
    calls: ['GET github /pulls/1$', 'GET github /pulls/1/merge$'],
    check: (o) =>
      assert.deepEqual(
        { ...json(o.pull_request) },
        {
          number: 1,
          title: 'PR 1',
          user: 'octocat',
          body: 'Fixes things',
          created_at: '2025-01-02T03:04:05+00:00',
          updated_at: '2025-01-03T00:00:00+00:00',
          state: 'open',
          merged: true,
          mergeable: true,
          url: 'https://github.com/octo/hello/pull/1',
        },
      ),
  },
  {
    type: 'GitHubGetPullRequestChangesNode',
    config: { repo_name: 'octo/hello', pr_number: 2 },
    calls: ['GET github /pulls/2/files$'],
    check: (o) => assert.equal(json(o.pull_request_changes)[0].filename, 'src/a.ts'),
  },
  {
    type: 'GitHubCreateIssueNode',
    config: { repo_name: 'octo/hello', issue_title: 'Broken', body: 'Steps…' },
    calls: ['POST github /repos/octo/hello/issues'],
    check: (o, fake) => {
      assert.deepEqual(fake.to('github', 'POST').at(-1)!.body, { title: 'Broken', body: 'Steps…' });
      assert.deepEqual(json(o.issue), {
        id: 99,
        number: 12,
        title: 'Broken',
        body: 'Steps…',
        url: 'https://github.com/octo/hello/issues/12',
        state: 'open',
        created_at: '2025-02-03T04:05:06+00:00',
        user: 'octocat',
      });
    },
  },
  {
    type: 'SlackNotifyNode',
    config: { channel: 'C123', message: 'Say {{in.x}}' },
    calls: ['POST slack /chat.postMessage'],
    check: (o, fake) => {
      const req = fake.to('slack').at(-1)!;
      assert.deepEqual(req.body, { channel: 'C123', text: 'Say hello' });
      assert.equal(req.headers.authorization, `Bearer ${CREDENTIALS.SLACK_BOT_TOKEN}`);
      assert.deepEqual(o, { status: 'success' });
    },
  },
  {
    type: 'SlackNotifyNode',
    config: { channel: 'C123', mode: 'user' },
    calls: ['POST slack /chat.postMessage'],
    check: (_o, fake) => {
      const req = fake.to('slack').at(-1)!;
      assert.equal(
        req.headers.authorization,
        `Bearer ${CREDENTIALS.SLACK_USER_TOKEN}`,
        'user mode posts with the user token',
      );
      assert.deepEqual(JSON.parse(req.body.text), { in: { x: 'hello' } }, 'an empty message sends the input as JSON');
    },
  },
  {
    type: 'FirecrawlScrapeNode',
    config: { url_template: 'https://example.org/{{in.x}}' },
    calls: ['POST firecrawl /v1/scrape'],
    check: (o, fake) => {
      assert.deepEqual(fake.to('firecrawl').at(-1)!.body, { url: 'https://example.org/hello', formats: ['markdown'] });
      assert.deepEqual(o, { markdown: '# Scraped https://example.org/hello' });
    },
  },
  {
    type: 'FirecrawlCrawlNode',
    config: { url_template: '{{in.x}}', limit: 5 },
    inputs: { x: 'https://example.org' },
    calls: ['POST firecrawl /v1/crawl$', 'GET firecrawl /v1/crawl/crawl-'],
    check: (o, fake) => {
      assert.deepEqual(fake.to('firecrawl', 'POST', /crawl$/).at(-1)!.body, {
        url: 'https://example.org',
        limit: 5,
        scrapeOptions: { formats: ['markdown', 'html'] },
      });
      assert.deepEqual(
        json(o.crawl_result).map((p: { markdown: string }) => p.markdown),
        ['# Page 1', '# Page 2'],
        'both parts of the result',
      );
    },
  },
  {
    type: 'ExaSearchNode',
    config: { query_template: 'news on {{in.x}}', max_results: 3, max_characters: 500 },
    calls: ['POST exa /search'],
    check: (o, fake) => {
      assert.deepEqual(fake.to('exa').at(-1)!.body, {
        query: 'news on hello',
        numResults: 3,
        contents: { text: { maxCharacters: 500 } },
      });
      assert.deepEqual(o.results[0], {
        title: 'About news on hello',
        url: 'https://example.org/1',
        content: 'page text',
        score: 0.9,
        published_date: '2024-05-01',
        author: 'Ann',
      });
      assert.equal(o.results[1].title, 'Untitled');
    },
  },
  {
    type: 'JinaReaderNode',
    config: {},
    inputs: { x: 'https://example.com/page' },
    calls: ['GET jina /https://example.com/page'],
    check: (o, fake) => {
      assert.equal(fake.to('jina').at(-1)!.headers['x-respond-with'], 'readerlm-v2');
      assert.deepEqual(o, { title: 'Example Domain', content: '# Example\n\nRead https://example.com/page' });
    },
  },
  {
    type: 'GoogleSheetsReadNode',
    config: { spreadsheet_id: 'sheet-1', range: 'Sheet1!A1:B2' },
    calls: ['GET google-sheets /v4/spreadsheets/sheet-1/values/Sheet1'],
    check: (o) => assert.deepEqual(o, { data: "[['name', 'qty'], ['apple', '3']]" }),
  },
  {
    type: 'YouTubeTranscriptNode',
    config: { video_url_template: 'https://www.youtube.com/watch?v={{in.x}}' },
    inputs: { x: 'dQw4w9WgXcQ' },
    calls: ['GET youtube /watch', 'POST youtube /youtubei/v1/player', 'GET youtube /api/timedtext'],
    check: (o, fake) => {
      assert.equal(fake.to('youtube', 'POST').at(-1)!.query.get('key'), 'fake-player-key');
      assert.equal(
        fake
          .to('youtube', 'GET', /timedtext/)
          .at(-1)!
          .query.get('lang'),
        'en',
        'English is preferred',
      );
      assert.deepEqual(o, { transcript: "Hello & welcome it's a <test>" });
    },
  },
  {
    type: 'RedditGetTopPostsNode',
    config: { subreddit: 'test', time_filter: 'day', limit: 500, only_self_posts: true },
    calls: ['GET reddit /r/test/top'],
    check: (o, fake) => {
      const q = fake.to('reddit').at(-1)!.query;
      assert.deepEqual([q.get('t'), q.get('limit')], ['day', '100']);
      assert.deepEqual(
        o.top_posts.map((p: { title: string }) => p.title),
        ['Top one'],
      );
      assert.equal(o.top_posts[0].selftext, 'body text');
    },
  },
  {
    type: 'RedditGetUserInfoNode',
    config: { username: 'spez' },
    calls: ['GET reddit /user/spez/about'],
    check: (o) =>
      assert.deepEqual(o.user_info, {
        name: 'spez',
        comment_karma: 100,
        link_karma: 20,
        is_mod: false,
        is_gold: true,
        is_employee: false,
        created_utc: 1300000000,
      }),
  },
  {
    type: 'RedditGetSubredditInfoNode',
    config: { subreddit_name: 'python' },
    calls: ['GET reddit /r/python/about', 'GET reddit /r/python/api/link_flair_v2'],
    check: (o) =>
      assert.deepEqual(o.subreddit_info, {
        display_name: 'python',
        title: 'All about python',
        description: 'long description',
        subscribers: 1234,
        created_utc: 1200000000,
        over18: false,
        available_flairs: ['Discussion', 'News'],
        public_description: 'short',
        url: '/r/python/',
      }),
  },
  {
    type: 'RedditGetSubredditStatsNode',
    config: { subreddit: 'python' },
    calls: ['GET reddit /r/python/about', 'GET reddit /r/python/new'],
    check: (o) => {
      assert.equal(o.subreddit_stats.active_users, 56);
      assert.deepEqual(o.subreddit_stats.recent_activity, {
        total_comments_last_100_posts: 6,
        total_score_last_100_posts: 20,
        average_comments_per_post: 3,
        average_score_per_post: 10,
      });
    },
  },
  {
    type: 'RedditGetTrendingSubredditsNode',
    config: { limit: 2 },
    calls: ['GET reddit /subreddits/popular'],
    check: (o) =>
      assert.deepEqual(o.trending_subreddits[1], {
        name: 'news',
        title: 'All about news',
        description: 'short',
        subscribers: 1234,
        url: '/r/news/',
        over18: false,
      }),
  },
  {
    type: 'RedditCreatePostNode',
    config: { subreddit: 'test', title: 'Hello', content: 'Body', flair: 'News' },
    calls: ['GET reddit /r/test/api/link_flair_v2', 'POST reddit /api/submit', 'GET reddit /by_id/t3_p9'],
    check: (o, fake) => {
      assert.deepEqual(fake.to('reddit-auth').at(-1)!.body, {
        grant_type: 'password',
        username: 'spur_bot',
        password: 'hunter2',
      });
      assert.deepEqual(fake.to('reddit', 'POST').at(-1)!.body, {
        sr: 'test',
        title: 'Hello',
        kind: 'self',
        api_type: 'json',
        resubmit: 'true',
        text: 'Body',
        flair_id: 'flair-2',
      });
      assert.deepEqual(o.post_info, {
        id: 'p9',
        title: 'My post',
        url: 'https://www.reddit.com/r/test/comments/p9/',
        permalink: '/r/test/comments/p9/',
        created_utc: 1700000000,
        author: 'spur_bot',
        flair: 'News',
      });
    },
  },
  {
    type: 'SendEmailNode',
    config: {
      from_template: 'me@example.org',
      to_template: "['a@example.org', 'b@example.org']",
      subject_template: 'Hi {{in.x}}',
      content_template: 'Body {{in.x}}',
    },
    calls: ['POST resend /emails'],
    check: (o, fake) => {
      assert.deepEqual(fake.to('resend').at(-1)!.body, {
        from: 'me@example.org',
        to: ['a@example.org', 'b@example.org'],
        subject: 'Hi hello',
        text: 'Body hello',
      });
      assert.deepEqual(
        { ...o, raw_response: json(o.raw_response) },
        {
          provider: 'resend',
          message_id: 're_0123456789',
          status: 'success',
          raw_response: {
            id: 're_0123456789',
            from: 'me@example.org',
            to: ['a@example.org', 'b@example.org'],
            subject: 'Hi hello',
          },
        },
      );
    },
  },
  {
    type: 'SendEmailNode',
    config: {
      provider: 'sendgrid',
      from_template: 'me@example.org',
      to_template: 'a@example.org',
      subject_template: 'S',
      content_template: 'C',
    },
    calls: ['POST sendgrid /v3/mail/send'],
    check: (o, fake) => {
      assert.deepEqual(fake.to('sendgrid').at(-1)!.body, {
        personalizations: [{ to: [{ email: 'a@example.org' }] }],
        from: { email: 'me@example.org' },
        subject: 'S',
        content: [{ type: 'text/plain', value: 'C' }],
      });
      assert.deepEqual(
        [o.provider, o.message_id, o.status, json(o.raw_response).status_code],
        ['sendgrid', 'sg-msg-1', 'success', 202],
      );
    },
  },
];

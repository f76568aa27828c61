import { z } from 'zod';
import { NodeExecutionError } from '../errors.js';
import { integrationNode, required } from './http/integration-node.js';
import { serviceFailure } from './http/service-errors.js';
import { SERVICES } from './http/services.js';
import { linkFlairs, listing, post, redditName, subreddit, thing, withReddit } from './reddit-api.js';

/** The six Reddit nodes on Reddit's OAuth API; outputs carry the fields PySpur's PRAW code reads. */
const common = { category: 'Integrations', logo: '/images/reddit.png', categoryLabel: 'Reddit' } as const;
const app = { kind: 'app' } as const;

const createdPost = z.object({
  id: z.string(),
  title: z.string(),
  url: z.string(),
  permalink: z.string(),
  created_utc: z.number(),
  author: z.string(),
  flair: z.string().nullish(),
});

export const redditCreatePostNode = integrationNode({
  ...common,
  name: 'RedditCreatePostNode',
  acts: true,
  displayName: 'RedditCreatePost',
  tag: 'RCPN #17A2B8',
  output: z.object({ post_info: z.union([createdPost, z.object({ error: z.string() })]) }),
  config: {
    subreddit: z.string().default(''),
    title: z.string().default(''),
    /** Text of a self post, URL of a link post */
    content: z.string().default(''),
    flair: z.string().nullish(),
    is_self: z.boolean().default(true),
    username: z.string().default(''),
    password: z.string().default(''),
  },
  // The subreddit posted to, the kind of post and the account stay the operator's; the model writes the post.
  modelSettable: ['title', 'content', 'flair'],
  async run(config, _input, ctx) {
    // As in PySpur, the environment's account wins over the one typed into the node.
    const username = (await ctx.secret('REDDIT_USERNAME'))?.trim() || config.username.trim();
    const password = (await ctx.secret('REDDIT_PASSWORD'))?.trim() || config.password;
    if (!username || !password)
      throw new NodeExecutionError(
        `${username ? 'REDDIT_PASSWORD' : 'REDDIT_USERNAME'} is not set (nor the node's ${username ? 'password' : 'username'}); posting needs a Reddit account`,
      );
    const sub = redditName(config.subreddit, 'subreddit');
    const title = required(config.title, 'title');
    return withReddit(ctx, { kind: 'user', username, password }, async (api) => {
      let flairId: string | undefined;
      if (config.flair) {
        const flairs = await linkFlairs(api, sub);
        flairId = flairs.find((f) => f.text === config.flair)?.id;
        if (!flairId)
          throw new NodeExecutionError(
            `Invalid flair '${config.flair}'. Available flairs: ${flairs.map((f) => f.text).join(', ') || 'none'}`,
          );
      }
      const form: Record<string, string> = {
        sr: decodeURIComponent(sub),
        title,
        kind: config.is_self ? 'self' : 'link',
        api_type: 'json',
        resubmit: 'true',
      };
      form[config.is_self ? 'text' : 'url'] = config.content;
      if (flairId) form.flair_id = flairId;
      const res = await api.request({ method: 'POST', path: '/api/submit', form });
      const answer = submitAnswer.safeParse(res.json);
      if (!answer.success)
        throw new NodeExecutionError(
          `Reddit answered POST /api/submit with an unexpected body: ${res.text.slice(0, 200)}`,
        );
      const { errors, data } = answer.data.json;
      if (errors?.length || !data?.name)
        throw serviceFailure(
          SERVICES.reddit,
          errors?.map((e) => e.join(': ')).join('; ') || 'the post was not created',
        );
      const [created] = await api.get(`/by_id/${encodeURIComponent(data.name)}`, listing(post));
      if (!created) throw new NodeExecutionError(`Reddit does not show the new post ${data.name}`);
      const info = {
        id: created.id,
        title: created.title,
        url: created.url,
        permalink: created.permalink,
        created_utc: created.created_utc,
        author: created.author ?? username,
        flair: created.link_flair_text ?? null,
      };
      return { post_info: info };
    });
  },
});

const submitAnswer = z.looseObject({
  json: z.looseObject({
    errors: z.array(z.array(z.unknown())).optional(),
    data: z.looseObject({ name: z.string().optional() }).optional(),
  }),
});

const redditPost = z.object({
  title: z.string(),
  score: z.number().int(),
  url: z.string(),
  author: z.string(),
  created_utc: z.number(),
  num_comments: z.number().int(),
  permalink: z.string(),
  is_self: z.boolean(),
  selftext: z.string().nullish(),
});

export const redditGetTopPostsNode = integrationNode({
  ...common,
  name: 'RedditGetTopPostsNode',
  displayName: 'RedditGetTopPosts',
  tag: 'RGTPN #E83E8C',
  output: z.object({ top_posts: z.array(redditPost) }),
  config: {
    subreddit: z.string().default(''),
    time_filter: z.enum(['hour', 'day', 'week', 'month', 'year', 'all']).default('week'),
    limit: z.number().int().min(1).default(10),
    only_self_posts: z.boolean().default(false),
  },
  modelSettable: ['subreddit', 'time_filter', 'only_self_posts'],
  async run(config, _input, ctx) {
    const sub = redditName(config.subreddit, 'subreddit');
    const query = { t: config.time_filter, limit: Math.min(config.limit, 100), raw_json: 1 };
    const posts = await withReddit(ctx, app, (api) => api.get(`/r/${sub}/top`, listing(post), query));
    const top = posts
      .filter((p) => !config.only_self_posts || p.is_self)
      .map((p) => ({
        title: p.title,
        score: p.score,
        url: p.url,
        author: p.author ?? 'None',
        created_utc: p.created_utc,
        num_comments: p.num_comments,
        permalink: p.permalink,
        is_self: p.is_self,
        selftext: p.is_self ? (p.selftext ?? '') : null,
      }));
    return { top_posts: top };
  },
});

const user = z.looseObject({
  name: z.string(),
  comment_karma: z.number(),
  link_karma: z.number(),
  is_mod: z.boolean(),
  is_gold: z.boolean(),
  is_employee: z.boolean(),
  created_utc: z.number(),
});

export const redditGetUserInfoNode = integrationNode({
  ...common,
  name: 'RedditGetUserInfoNode',
  displayName: 'RedditGetUserInfo',
  tag: 'RGUIN #007BFF',
  output: z.object({ user_info: z.record(z.string(), z.unknown()) }),
  config: { username: z.string().default('') },
  modelSettable: ['username'],
  async run(config, _input, ctx) {
    const name = redditName(config.username, 'username');
    const u = await withReddit(ctx, app, (api) => api.get(`/user/${name}/about`, thing(user), { raw_json: 1 }));
    const info = {
      name: u.name,
      comment_karma: u.comment_karma,
      link_karma: u.link_karma,
      is_mod: u.is_mod,
      is_gold: u.is_gold,
      is_employee: u.is_employee,
      created_utc: u.created_utc,
    };
    return { user_info: info };
  },
});

export const redditGetSubredditInfoNode = integrationNode({
  ...common,
  name: 'RedditGetSubredditInfoNode',
  displayName: 'RedditGetSubredditInfo',
  tag: 'RGSIN #FF00FF',
  output: z.object({ subreddit_info: z.record(z.string(), z.unknown()) }),
  config: { subreddit_name: z.string().default('') },
  modelSettable: ['subreddit_name'],
  async run(config, _input, ctx) {
    const sub = redditName(config.subreddit_name, 'subreddit_name');
    const [about, flairs] = await withReddit(
      ctx,
      app,
      async (api) =>
        [await api.get(`/r/${sub}/about`, thing(subreddit), { raw_json: 1 }), await linkFlairs(api, sub)] as const,
    );
    const info = {
      display_name: about.display_name,
      title: about.title,
      description: about.description ?? '',
      subscribers: about.subscribers ?? 0,
      created_utc: about.created_utc,
      over18: about.over18 ?? false,
      available_flairs: flairs.map((f) => f.text),
      public_description: about.public_description ?? '',
      url: about.url,
    };
    return { subreddit_info: info };
  },
});

export const redditGetSubredditStatsNode = integrationNode({
  ...common,
  name: 'RedditGetSubredditStatsNode',
  displayName: 'RedditGetSubredditStats',
  tag: 'RGSSN #6F42C1',
  output: z.object({ subreddit_stats: z.record(z.string(), z.unknown()) }),
  config: { subreddit: z.string().default('') },
  modelSettable: ['subreddit'],
  async run(config, _input, ctx) {
    const sub = redditName(config.subreddit, 'subreddit');
    const [about, recent] = await withReddit(
      ctx,
      app,
      async (api) =>
        [
          await api.get(`/r/${sub}/about`, thing(subreddit), { raw_json: 1 }),
          await api.get(`/r/${sub}/new`, listing(post), { limit: 100, raw_json: 1 }),
        ] as const,
    );
    const comments = recent.reduce((sum, p) => sum + p.num_comments, 0);
    const score = recent.reduce((sum, p) => sum + p.score, 0);
    const stats = {
      display_name: about.display_name,
      subscribers: about.subscribers ?? 0,
      active_users: about.active_user_count ?? 0,
      description: about.description ?? '',
      created_utc: about.created_utc,
      over18: about.over18 ?? false,
      public_description: about.public_description ?? '',
      recent_activity: {
        total_comments_last_100_posts: comments,
        total_score_last_100_posts: score,
        average_comments_per_post: recent.length ? comments / recent.length : 0,
        average_score_per_post: recent.length ? score / recent.length : 0,
      },
    };
    return { subreddit_stats: stats };
  },
});

export const redditGetTrendingSubredditsNode = integrationNode({
  ...common,
  name: 'RedditGetTrendingSubredditsNode',
  displayName: 'RedditGetTrendingSubreddits',
  tag: 'RGTSN #007BFF',
  output: z.object({ trending_subreddits: z.array(z.record(z.string(), z.unknown())) }),
  config: { limit: z.number().int().min(1).default(5) },
  async run(config, _input, ctx) {
    const popular = await withReddit(ctx, app, (api) =>
      api.get('/subreddits/popular', listing(subreddit), { limit: Math.min(config.limit, 100), raw_json: 1 }),
    );
    const trending = popular.map((s) => ({
      name: s.display_name,
      title: s.title,
      description: s.public_description ?? '',
      subscribers: s.subscribers ?? 0,
      url: s.url,
      over18: s.over18 ?? false,
    }));
    return { trending_subreddits: trending };
  },
});

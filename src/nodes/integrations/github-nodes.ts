import { z } from 'zod';
import { integrationNode, required } from './http/integration-node.js';
import {
  allPages,
  changedFile,
  gitHub,
  isoformat,
  issue,
  jsonText,
  prNumber,
  pullRequest,
  repoPath,
  repository,
} from './github-api.js';

/** The seven GitHub nodes: each output is JSON text in the layout of PySpur's GitHub tools. */
const common = { category: 'Integrations', logo: '/images/github.png', categoryLabel: 'GitHub' } as const;

export const gitHubListPullRequestsNode = integrationNode({
  ...common,
  name: 'GitHubListPullRequestsNode',
  displayName: 'GitHubListPullRequests',
  tag: 'GLPRN #8A2BE2',
  output: z.object({ pull_requests: z.string() }),
  config: { repo_name: z.string().default(''), state: z.string().default('open') },
  modelSettable: ['repo_name', 'state'],
  async run(config, _input, ctx) {
    const pulls = await allPages(await gitHub(ctx), `${repoPath(config.repo_name)}/pulls`, pullRequest, {
      state: config.state,
    });
    const list = pulls.map((pr) => ({
      number: pr.number,
      title: pr.title,
      user: pr.user.login,
      created_at: isoformat(pr.created_at),
      state: pr.state,
      url: pr.html_url,
    }));
    return { pull_requests: jsonText(list) };
  },
});

export const gitHubListRepositoriesNode = integrationNode({
  ...common,
  name: 'GitHubListRepositoriesNode',
  displayName: 'GitHubListRepositories',
  tag: 'GLRN #8CC63F',
  output: z.object({ repositories: z.string() }),
  config: {},
  async run(_config, _input, ctx) {
    const repos = await allPages(await gitHub(ctx), '/user/repos', z.looseObject({ full_name: z.string() }));
    return { repositories: jsonText(repos.map((r) => r.full_name)) };
  },
});

export const gitHubGetRepositoryNode = integrationNode({
  ...common,
  name: 'GitHubGetRepositoryNode',
  displayName: 'GitHubGetRepository',
  tag: 'GGRN #FA8072',
  output: z.object({ repository_details: z.string() }),
  config: { repo_name: z.string().default('') },
  modelSettable: ['repo_name'],
  async run(config, _input, ctx) {
    const repo = await (await gitHub(ctx)).get(repoPath(config.repo_name), repository);
    const details = {
      name: repo.full_name,
      description: repo.description,
      url: repo.html_url,
      stars: repo.stargazers_count,
      forks: repo.forks_count,
      open_issues: repo.open_issues_count ?? 0,
      language: repo.language,
      license: repo.license?.name ?? null,
      default_branch: repo.default_branch ?? null,
    };
    return { repository_details: jsonText(details) };
  },
});

export const gitHubSearchRepositoriesNode = integrationNode({
  ...common,
  name: 'GitHubSearchRepositoriesNode',
  displayName: 'GitHubSearchRepositories',
  tag: 'GSRN #FFC107',
  output: z.object({ repositories: z.string() }),
  config: {
    query: z.string(),
    sort: z.string().default('stars'),
    order: z.string().default('desc'),
    per_page: z.number().int().default(5),
  },
  // `per_page` is a limit: it stays the operator's.
  modelSettable: ['query', 'sort', 'order'],
  async run(config, _input, ctx) {
    const perPage = Math.min(Math.max(config.per_page, 1), 100);
    const query = { q: required(config.query, 'query'), sort: config.sort, order: config.order, per_page: perPage };
    const found = await (
      await gitHub(ctx)
    ).get('/search/repositories', z.looseObject({ items: z.array(repository) }), query);
    const list = found.items.slice(0, perPage).map((r) => ({
      full_name: r.full_name,
      description: r.description,
      url: r.html_url,
      stars: r.stargazers_count,
      forks: r.forks_count,
      language: r.language,
    }));
    return { repositories: jsonText(list) };
  },
});

export const gitHubGetPullRequestNode = integrationNode({
  ...common,
  name: 'GitHubGetPullRequestNode',
  displayName: 'GitHubGetPullRequest',
  tag: 'GGPRN #17A2B8',
  output: z.object({ pull_request: z.string() }),
  config: { repo_name: z.string().default(''), pr_number: z.string().default('') },
  modelSettable: ['repo_name', 'pr_number'],
  async run(config, _input, ctx) {
    const api = await gitHub(ctx);
    const path = `${repoPath(config.repo_name)}/pulls/${prNumber(config.pr_number)}`;
    const pr = await api.get(path, pullRequest);
    // GitHub's merge check: 204 when merged, 404 when not.
    const merged = (await api.request({ path: `${path}/merge`, accept: [404] })).status === 204;
    const details = {
      number: pr.number,
      title: pr.title,
      user: pr.user.login,
      body: pr.body,
      created_at: isoformat(pr.created_at),
      updated_at: isoformat(pr.updated_at),
      state: pr.state,
      merged,
      mergeable: pr.mergeable ?? null,
      url: pr.html_url,
    };
    return { pull_request: jsonText(details) };
  },
});

export const gitHubGetPullRequestChangesNode = integrationNode({
  ...common,
  name: 'GitHubGetPullRequestChangesNode',
  displayName: 'GitHubGetPullRequestChanges',
  tag: 'GGPRCN #DC3545',
  output: z.object({ pull_request_changes: z.string() }),
  config: { repo_name: z.string().default(''), pr_number: z.number().int().nullish() },
  modelSettable: ['repo_name', 'pr_number'],
  async run(config, _input, ctx) {
    const files = await allPages(
      await gitHub(ctx),
      `${repoPath(config.repo_name)}/pulls/${prNumber(config.pr_number)}/files`,
      changedFile,
    );
    const changes = files.map((f) => ({
      filename: f.filename,
      status: f.status,
      additions: f.additions,
      deletions: f.deletions,
      changes: f.changes,
      raw_url: f.raw_url,
      blob_url: f.blob_url,
      patch: f.patch,
    }));
    return { pull_request_changes: jsonText(changes) };
  },
});

export const gitHubCreateIssueNode = integrationNode({
  ...common,
  name: 'GitHubCreateIssueNode',
  acts: true,
  displayName: 'GitHubCreateIssue',
  tag: 'GCIN #20C997',
  output: z.object({ issue: z.string() }),
  config: { repo_name: z.string().default(''), issue_title: z.string().default(''), body: z.string().nullish() },
  // The repository written to stays the operator's; the model writes the issue.
  modelSettable: ['issue_title', 'body'],
  async run(config, _input, ctx) {
    const request = {
      title: required(config.issue_title, 'issue_title'),
      ...(config.body != null ? { body: config.body } : {}),
    };
    const created = await (await gitHub(ctx)).post(`${repoPath(config.repo_name)}/issues`, request, issue);
    const details = {
      id: created.id,
      number: created.number,
      title: created.title,
      body: created.body,
      url: created.html_url,
      state: created.state,
      created_at: isoformat(created.created_at),
      user: created.user.login,
    };
    return { issue: jsonText(details) };
  },
});

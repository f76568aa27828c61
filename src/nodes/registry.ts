import { agentNode } from './ai/agent-node.js';
import { bestOfNNode } from './ai/best-of-n-node.js';
import { retrieverNode } from './ai/retriever-node.js';
import { singleLlmCallNode } from './ai/single-llm-call-node.js';
import { pythonFuncNode } from './code-execution/python-func-node.js';
import { forLoopNode } from './experimental/for-loop-node.js';
import { inputNode } from './input-output/input-node.js';
import { outputNode } from './input-output/output-node.js';
import { firecrawlCrawlNode } from './integrations/firecrawl-crawl-node.js';
import { firecrawlScrapeNode } from './integrations/firecrawl-scrape-node.js';
import { gitHubCreateIssueNode } from './integrations/github-create-issue-node.js';
import { gitHubGetPullRequestChangesNode } from './integrations/github-get-pull-request-changes-node.js';
import { gitHubGetPullRequestNode } from './integrations/github-get-pull-request-node.js';
import { gitHubGetRepositoryNode } from './integrations/github-get-repository-node.js';
import { gitHubListPullRequestsNode } from './integrations/github-list-pull-requests-node.js';
import { gitHubListRepositoriesNode } from './integrations/github-list-repositories-node.js';
import { gitHubSearchRepositoriesNode } from './integrations/github-search-repositories-node.js';
import { googleSheetsReadNode } from './integrations/google-sheets-read-node.js';
import { jinaReaderNode } from './integrations/jina-reader-node.js';
import { redditCreatePostNode } from './integrations/reddit-create-post-node.js';
import { redditGetSubredditInfoNode } from './integrations/reddit-get-subreddit-info-node.js';
import { redditGetSubredditStatsNode } from './integrations/reddit-get-subreddit-stats-node.js';
import { redditGetTopPostsNode } from './integrations/reddit-get-top-posts-node.js';
import { redditGetTrendingSubredditsNode } from './integrations/reddit-get-trending-subreddits-node.js';
import { redditGetUserInfoNode } from './integrations/reddit-get-user-info-node.js';
import { slackNotifyNode } from './integrations/slack-notify-node.js';
import { youTubeTranscriptNode } from './integrations/youtube-transcript-node.js';
import { coalesceNode } from './logic/coalesce-node.js';
import { humanInterventionNode } from './logic/human-intervention-node.js';
import { mergeNode } from './logic/merge-node.js';
import { routerNode } from './logic/router-node.js';
import { staticValueNode } from './logic/static-value-node.js';
import { exaSearchNode } from './search/exa-search-node.js';
import { sendEmailNode } from './tools/send-email-node.js';
import type { NodeTypeDefinition } from './types.js';

/** Every node type, in the order of `/node/supported_types/` (category, then PySpur's row order). */
export const NODE_TYPES: readonly NodeTypeDefinition[] = Object.freeze([
  inputNode,
  outputNode,
  singleLlmCallNode,
  agentNode,
  retrieverNode,
  bestOfNNode,
  pythonFuncNode,
  routerNode,
  coalesceNode,
  mergeNode,
  staticValueNode,
  humanInterventionNode,
  forLoopNode,
  slackNotifyNode,
  googleSheetsReadNode,
  youTubeTranscriptNode,
  gitHubListPullRequestsNode,
  gitHubListRepositoriesNode,
  gitHubGetRepositoryNode,
  gitHubSearchRepositoriesNode,
  gitHubGetPullRequestNode,
  gitHubGetPullRequestChangesNode,
  gitHubCreateIssueNode,
  jinaReaderNode,
  redditCreatePostNode,
  redditGetTopPostsNode,
  redditGetUserInfoNode,
  redditGetSubredditInfoNode,
  redditGetSubredditStatsNode,
  redditGetTrendingSubredditsNode,
  firecrawlCrawlNode,
  firecrawlScrapeNode,
  exaSearchNode,
  sendEmailNode,
]);

export const NODE_TYPE_NAMES: readonly string[] = Object.freeze(NODE_TYPES.map((node) => node.name));

const byName = new Map(NODE_TYPES.map((node) => [node.name, node]));

/** The definition for a `node_type` value, or undefined for names PySpur does not expose. */
export function getNodeType(name: string): NodeTypeDefinition | undefined {
  return byName.get(name);
}

import { agentNode } from './ai/agent-node.js';
import { bestOfNNode } from './ai/best-of-n-node.js';
import { retrieverNode } from './ai/retriever-node.js';
import { singleLlmCallNode } from './ai/single-llm-call-node.js';
import { pythonFuncNode } from './code-execution/python-func-node.js';
import { forLoopNode } from './experimental/for-loop-node.js';
import { inputNode } from './input-output/input-node.js';
import { outputNode } from './input-output/output-node.js';
import { firecrawlCrawlNode, firecrawlScrapeNode } from './integrations/firecrawl-nodes.js';
import {
  gitHubCreateIssueNode,
  gitHubGetPullRequestChangesNode,
  gitHubGetPullRequestNode,
  gitHubGetRepositoryNode,
  gitHubListPullRequestsNode,
  gitHubListRepositoriesNode,
  gitHubSearchRepositoriesNode,
} from './integrations/github-nodes.js';
import { httpRequestNode } from './integrations/http-request/http-request-node.js';
import { googleSheetsReadNode } from './integrations/google-sheets-read-node.js';
import { jinaReaderNode } from './integrations/jina-reader-node.js';
import {
  redditCreatePostNode,
  redditGetSubredditInfoNode,
  redditGetSubredditStatsNode,
  redditGetTopPostsNode,
  redditGetTrendingSubredditsNode,
  redditGetUserInfoNode,
} from './integrations/reddit-nodes.js';
import { slackNotifyNode } from './integrations/slack-notify-node.js';
import { youTubeTranscriptNode } from './integrations/youtube-transcript-node.js';
import { coalesceNode } from './logic/coalesce-node.js';
import { humanInterventionNode } from './logic/human-intervention-node.js';
import { mergeNode } from './logic/merge-node.js';
import { routerNode } from './logic/router-node.js';
import { staticValueNode } from './logic/static-value-node.js';
import { subworkflowNode } from './logic/subworkflow-node.js';
import { mcpToolNode } from './mcp/mcp-tool-node.js';
import { exaSearchNode } from './search/exa-search-node.js';
import { sendEmailNode } from './tools/send-email-node.js';
import { waitForCallbackNode } from './waits/wait-for-callback-node.js';
import { waitNode } from './waits/wait-node.js';
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
  subworkflowNode,
  waitNode,
  waitForCallbackNode,
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
  httpRequestNode,
  exaSearchNode,
  sendEmailNode,
  mcpToolNode,
]);

export const NODE_TYPE_NAMES: readonly string[] = Object.freeze(NODE_TYPES.map((node) => node.name));

const byName = new Map(NODE_TYPES.map((node) => [node.name, node]));

/** The definition for a `node_type` value, or undefined for names PySpur does not expose. */
export function getNodeType(name: string): NodeTypeDefinition | undefined {
  return byName.get(name);
}

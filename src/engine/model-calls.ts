import type { GraphNode } from './run-contract';

/** The model a node calls (`llm_info.model`), if it calls one. */
export function modelOf(node: Pick<GraphNode, 'config'>): string | undefined {
  const info = node.config.llm_info;
  if (!info || typeof info !== 'object') return undefined;
  const model = (info as { model?: unknown }).model;
  return typeof model === 'string' && model.length > 0 ? model : undefined;
}

/** Tokens a call may use, before it is made: its input's (about 4 characters a token) plus its max output. */
export function tokenEstimate(node: GraphNode, input: unknown): number {
  const info = node.config.llm_info as { max_tokens?: unknown } | undefined;
  const maxOut = typeof info?.max_tokens === 'number' && info.max_tokens > 0 ? info.max_tokens : 0;
  return Math.ceil((JSON.stringify(input) ?? '').length / 4) + maxOut;
}

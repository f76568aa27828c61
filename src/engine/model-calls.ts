import type { GraphNode } from './run-contract';

/** The model a node calls (`llm_info.model`), if it calls one. */
export function modelOf(node: Pick<GraphNode, 'config'>): string | undefined {
  const info = node.config.llm_info;
  if (!info || typeof info !== 'object') return undefined;
  const model = (info as { model?: unknown }).model;
  return typeof model === 'string' && model.length > 0 ? model : undefined;
}

import { LLM_NODE_TYPES } from './definition-rules';
import type { WorkflowDefinition, WorkflowLink, WorkflowNode } from './definition.schema';

/**
 * PySpur's save-time rewrites, so clients read back what PySpur would store: blank titles become
 * the node id, bare OpenAI/Anthropic model names get their provider prefix, and links out of a
 * router carry `target_handle = "<router id>.<route>"`.
 */
export function normalizeDefinition(def: WorkflowDefinition): WorkflowDefinition {
  const routers = new Set(def.nodes.filter((n) => n.node_type === 'RouterNode').map((n) => n.id));
  return {
    ...def,
    nodes: def.nodes.map(normalizeNode),
    links: def.links.map((link) => (routers.has(link.source_id) ? rewriteRouterLink(link) : link)),
  };
}

function normalizeNode(node: WorkflowNode): WorkflowNode {
  const title = node.title.trim() === '' ? node.id : node.title;
  if (!LLM_NODE_TYPES.has(node.node_type)) return { ...node, title };
  const info = node.config.llm_info as Record<string, unknown>;
  return {
    ...node,
    title,
    config: { ...node.config, llm_info: { ...info, model: prefixedModel(String(info.model)) } },
  };
}

export function prefixedModel(model: string): string {
  if (/^(gpt|chatgpt|o1)/.test(model)) return `openai/${model}`;
  if (model.startsWith('claude')) return `anthropic/${model}`;
  return model;
}

function rewriteRouterLink(link: WorkflowLink): WorkflowLink {
  const handle = (link.target_handle ?? link.source_id).split('.').pop() ?? '';
  const prefix = `${link.source_id}.`;
  return { ...link, target_handle: handle.startsWith(prefix) ? handle : `${prefix}${handle}` };
}

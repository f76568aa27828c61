import { MAX_LOOP_ITERATIONS } from '../engine/for-loop';
import type { WorkflowDefinition } from './definition.schema';
import type { z } from 'zod';
import { HttpRequestSaveConfig } from '../nodes/integrations/http-request/http-request-config';
import { McpServerConfig } from '../nodes/mcp/mcp-config';
import { checkApprovals } from './approval-rules';
import { fallbackModelsSchema } from '../nodes/ai/llm-fields';
import { subworkflowConfig } from '../nodes/logic/subworkflow-node';
import { checkWaits } from './wait-rules';

export interface RuleIssue {
  path: (string | number)[];
  message: string;
  kind: 'value_error' | 'assertion_error';
}

export const LLM_NODE_TYPES = new Set(['SingleLLMCallNode', 'BestOfNNode']);

/**
 * Graph rules checked at save time, so a stored definition can always be scheduled: unique node
 * ids, links between existing nodes, at most one top-level InputNode, LLM nodes with a model, and
 * PySpur's chatbot I/O fields, ForLoopNodes within the iteration cap, HumanInterventionNodes'
 * approval settings (approval-rules.ts), and the configs of SAVE_CHECKED_CONFIGS,
 * waiting nodes and callback URLs (wait-rules.ts).
 */
export function checkDefinitionRules(def: WorkflowDefinition): RuleIssue[] {
  return [
    ...checkNodeIds(def),
    ...checkLinks(def),
    ...checkInputNodes(def),
    ...checkLlmNodes(def),
    ...checkChatbot(def),
    ...checkLoops(def),
    ...checkNodeConfigs(def),
    ...checkApprovals(def),
    ...checkSubworkflowNodes(def),
    ...checkWaits(def),
  ];
}

/**
 * Config models checked at save, by node type: where a definition could hold an inline secret
 * (MCP server headers, HTTP request headers name stored credentials), it is refused at the field.
 */
const SAVE_CHECKED_CONFIGS: Readonly<Record<string, z.ZodType>> = {
  MCPToolNode: McpServerConfig,
  HTTPRequestNode: HttpRequestSaveConfig,
};

function checkNodeConfigs(def: WorkflowDefinition): RuleIssue[] {
  return def.nodes.flatMap((node, i) => {
    const schema = SAVE_CHECKED_CONFIGS[node.node_type];
    if (!schema) return [];
    return schemaIssues(schema, node.config ?? {}, ['nodes', i, 'config'], `${node.node_type} '${node.id}'`);
  });
}

/** A value's issues against its schema, each at its field under `path`, its message after `label`. */
function schemaIssues(schema: z.ZodType, value: unknown, path: (string | number)[], label: string): RuleIssue[] {
  const parsed = schema.safeParse(value);
  if (parsed.success) return [];
  return parsed.error.issues.map((issue) => ({
    path: [...path, ...issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p))],
    message: `${label}: ${issue.message}`,
    kind: 'value_error' as const,
  }));
}

/**
 * A SubworkflowNode's config, checked when saved; it runs only at the top level, where its run can
 * own a child run (a loop body runs its nodes without tasks of their own). What it names is checked
 * against the workspace's workflows by the workflow service (cycles, depth, workspace).
 */
function checkSubworkflowNodes(def: WorkflowDefinition): RuleIssue[] {
  return def.nodes.flatMap((node, i) => {
    if (node.node_type !== 'SubworkflowNode') return [];
    const issues: RuleIssue[] = [];
    if (node.parent_id !== null)
      issues.push({
        path: ['nodes', i, 'parent_id'],
        message: `SubworkflowNode '${node.id}' cannot run inside a loop: place it at the top level of the workflow`,
        kind: 'value_error',
      });
    const map = node.config.input_map;
    if (map !== null && typeof map === 'object' && Object.hasOwn(map, '__proto__'))
      issues.push({
        path: ['nodes', i, 'config', 'input_map', '__proto__'],
        message: `SubworkflowNode '${node.id}': '__proto__' is not a field name`,
        kind: 'value_error',
      });
    return [
      ...issues,
      ...schemaIssues(subworkflowConfig, node.config ?? {}, ['nodes', i, 'config'], `SubworkflowNode '${node.id}'`),
    ];
  });
}

function checkNodeIds(def: WorkflowDefinition): RuleIssue[] {
  const seen = new Set<string>();
  const issues: RuleIssue[] = [];
  def.nodes.forEach((node, i) => {
    if (seen.has(node.id))
      issues.push({ path: ['nodes', i, 'id'], message: `Duplicate node id '${node.id}'`, kind: 'value_error' });
    seen.add(node.id);
  });
  return issues;
}

function checkLinks(def: WorkflowDefinition): RuleIssue[] {
  const ids = new Set(def.nodes.map((n) => n.id));
  const issues: RuleIssue[] = [];
  // A child whose parent is missing would silently never run.
  def.nodes.forEach((node, i) => {
    if (node.parent_id !== null && !ids.has(node.parent_id)) {
      issues.push({
        path: ['nodes', i, 'parent_id'],
        message: `Node '${node.id}' has parent_id '${node.parent_id}', which is not a node of this workflow`,
        kind: 'value_error',
      });
    }
  });
  def.links.forEach((link, i) => {
    for (const end of ['source_id', 'target_id'] as const) {
      if (!ids.has(link[end])) {
        issues.push({
          path: ['links', i, end],
          message: `Link ${end} '${link[end]}' is not a node of this workflow`,
          kind: 'value_error',
        });
      }
    }
  });
  return issues;
}

function checkInputNodes(def: WorkflowDefinition): RuleIssue[] {
  const inputs = def.nodes
    .map((n, i) => ({ n, i }))
    .filter(({ n }) => n.node_type === 'InputNode' && n.parent_id === null);
  return inputs.slice(1).map(({ i }) => ({
    path: ['nodes', i],
    message: 'A workflow can have at most one top-level InputNode',
    kind: 'value_error' as const,
  }));
}

function checkLlmNodes(def: WorkflowDefinition): RuleIssue[] {
  const issues: RuleIssue[] = [];
  def.nodes.forEach((node, i) => {
    if (!LLM_NODE_TYPES.has(node.node_type)) return;
    const info = node.config.llm_info;
    if (info === null || typeof info !== 'object' || Array.isArray(info)) {
      issues.push({
        path: ['nodes', i],
        message: `${node.node_type} '${node.id}' needs config.llm_info`,
        kind: 'assertion_error',
      });
    } else if (typeof (info as Record<string, unknown>).model !== 'string') {
      issues.push({
        path: ['nodes', i, 'config', 'llm_info', 'model'],
        message: `${node.node_type} '${node.id}' needs config.llm_info.model`,
        kind: 'value_error',
      });
    }
  });
  return [...issues, ...checkFallbackModels(def)];
}

/** `llm_info.fallback_models` of any node with a model (Agents' too): known models, at most three. */
function checkFallbackModels(def: WorkflowDefinition): RuleIssue[] {
  return def.nodes.flatMap((node, i) => {
    const info = node.config.llm_info as Record<string, unknown> | null | undefined;
    if (!info || typeof info !== 'object' || info.fallback_models === undefined) return [];
    return schemaIssues(
      fallbackModelsSchema,
      info.fallback_models,
      ['nodes', i, 'config', 'llm_info', 'fallback_models'],
      `${node.node_type} '${node.id}': fallback_models`,
    );
  });
}

/** A loop's history grows with every iteration: the cap keeps a run inside Temporal's history limits. */
function checkLoops(def: WorkflowDefinition): RuleIssue[] {
  const issues: RuleIssue[] = [];
  def.nodes.forEach((node, i) => {
    if (node.node_type !== 'ForLoopNode') return;
    const iterations = Number(node.config.num_iterations ?? 1);
    if (iterations > MAX_LOOP_ITERATIONS) {
      issues.push({
        path: ['nodes', i, 'config', 'num_iterations'],
        message: `ForLoopNode '${node.id}' has num_iterations ${iterations}, over the maximum of ${MAX_LOOP_ITERATIONS}`,
        kind: 'value_error',
      });
    }
  });
  return issues;
}

function checkChatbot(def: WorkflowDefinition): RuleIssue[] {
  if (def.spur_type !== 'chatbot') return [];
  const issues: RuleIssue[] = [];
  const input = def.nodes.find((n) => n.node_type === 'InputNode' && n.parent_id === null);
  const output = def.nodes.find((n) => n.node_type === 'OutputNode' && n.parent_id === null);
  if (input) {
    const problem = missingStringFields(input.config.output_json_schema, ['user_message', 'session_id']);
    if (problem === 'invalid') issues.push(chatbotIssue('Invalid JSON schema in input node output_json_schema'));
    else if (problem.length)
      issues.push(chatbotIssue(`Chatbot input node must have the following mandatory fields: ${problem.join(', ')}`));
  }
  if (output) {
    const problem = missingStringFields(output.config.output_json_schema, ['assistant_message']);
    if (problem === 'invalid') issues.push(chatbotIssue('Invalid JSON schema in output node output_json_schema'));
    else if (problem.length)
      issues.push(chatbotIssue(`Chatbot output node must have the following mandatory fields: ${problem.join(', ')}`));
  }
  return issues;
}

function chatbotIssue(message: string): RuleIssue {
  return { path: [], message, kind: 'value_error' };
}

/** Fields absent or not typed `string` in a JSON Schema given as text; 'invalid' if unparsable. */
function missingStringFields(schemaText: unknown, fields: string[]): string[] | 'invalid' {
  let schema: unknown;
  try {
    schema = JSON.parse(typeof schemaText === 'string' ? schemaText : '{}');
  } catch {
    return 'invalid';
  }
  const rawProps = (schema as { properties?: unknown } | null)?.properties;
  // A schema whose `properties` is not an object declares none of the fields.
  const props =
    rawProps !== null && typeof rawProps === 'object' && !Array.isArray(rawProps)
      ? (rawProps as Record<string, unknown>)
      : {};
  return fields.flatMap((f) => {
    if (!(f in props)) return [f];
    return (props[f] as { type?: unknown } | null)?.type === 'string' ? [] : [`${f} (must be of type str)`];
  });
}

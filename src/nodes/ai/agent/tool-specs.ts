import { toolName } from '../../../engine/agent-loop';
import type { GraphNode, ToolFields } from '../../../engine/run-contract';
import { toPlainJsonSchema } from '../../base-config.js';
import { NodeExecutionError } from '../../errors.js';
import { getNodeType } from '../../registry.js';
import type { NodeTypeDefinition } from '../../types.js';
import type { ToolSpec } from '../llm/types.js';

type JsonSchema = Record<string, unknown>;

function nodeTypeOf(node: GraphNode): NodeTypeDefinition {
  const type = getNodeType(node.node_type);
  if (!type) throw new NodeExecutionError(`Tool '${node.title}' has an unknown node type '${node.node_type}'`);
  return type;
}

function propertiesOf(schema: JsonSchema): Record<string, JsonSchema> {
  const properties = schema.properties;
  return properties !== null && typeof properties === 'object' ? (properties as Record<string, JsonSchema>) : {};
}

function requiredOf(schema: JsonSchema): string[] {
  return Array.isArray(schema.required) ? schema.required.filter((key): key is string => typeof key === 'string') : [];
}

/** Node types whose functions are routed (agent-loop.ts): an MCP server offers its tools by their own names. */
export const ROUTED_TOOL_TYPES: ReadonlySet<string> = new Set(['MCPToolNode']);

/** What the model may send to a tool of this node: the engine refuses config fields outside `settable`. */
export function toolFields(node: GraphNode): ToolFields {
  const type = nodeTypeOf(node);
  return {
    settable: [...(type.modelSettable ?? [])],
    config: Object.keys(type.config.shape),
    ...(ROUTED_TOOL_TYPES.has(type.name) ? { routed: true } : {}),
  };
}

/**
 * A tool node offered to the model: named after the node's title, described by its node type, and
 * parameterised by the type's input model plus its settable config fields, nothing else (no code,
 * template, URL or limit is shown or accepted). A settable field the stored config holds is not
 * required: the stored value applies when the model leaves it out.
 */
export function toolSpec(node: GraphNode): ToolSpec {
  const type = nodeTypeOf(node);
  const settable = type.modelSettable ?? [];
  const config = toPlainJsonSchema(type.config);
  const input = type.input ? toPlainJsonSchema(type.input) : { properties: {}, additionalProperties: false };
  const configProperties = propertiesOf(config);
  const settableProperties = Object.fromEntries(
    settable.map((name) => [
      name,
      {
        ...configProperties[name],
        description: `Setting of this tool for this call; the configured value applies when left out.`,
      },
    ]),
  );
  const required = [
    ...requiredOf(input),
    ...requiredOf(config).filter((name) => settable.includes(name) && !Object.hasOwn(node.config, name)),
  ];
  // An open input model (most node types) takes any fields: the tool reads them as its input.
  const openInput = input.additionalProperties !== undefined && input.additionalProperties !== false;
  const description = type.description ?? `${type.displayName}: a ${type.name} configured as '${node.title}'`;
  return {
    name: toolName(node.title),
    description: settable.length > 0 ? `${description} Settable per call: ${settable.join(', ')}.` : description,
    parameters: {
      type: 'object',
      properties: { ...propertiesOf(input), ...settableProperties },
      additionalProperties: openInput,
      ...(required.length > 0 ? { required } : {}),
    },
  };
}

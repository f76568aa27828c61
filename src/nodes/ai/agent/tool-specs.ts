import { toolName } from '../../../engine/agent-loop';
import type { GraphNode } from '../../../engine/run-contract';
import { toPlainJsonSchema } from '../../base-config.js';
import { NodeExecutionError } from '../../errors.js';
import { getNodeType } from '../../registry.js';
import type { ToolSpec } from '../llm/types.js';

/**
 * A tool node offered to the model (pyspur-facts §13): named after the node's title, described by
 * its node type, parameterised by that type's config JSON schema. Fields the stored config already
 * holds are not required (the call's arguments are merged over the stored config).
 */
export function toolSpec(node: GraphNode): ToolSpec {
  const type = getNodeType(node.node_type);
  if (!type) throw new NodeExecutionError(`Tool '${node.title}' has an unknown node type '${node.node_type}'`);
  const { title: _title, required, ...schema } = toPlainJsonSchema(type.config);
  const stillRequired = Array.isArray(required) ? required.filter((key) => typeof key === 'string' && !(key in node.config)) : [];
  return {
    name: toolName(node.title),
    description: type.description ?? `${type.displayName}: a ${type.name} configured as '${node.title}'`,
    parameters: { ...schema, type: 'object', ...(stillRequired.length > 0 ? { required: stillRequired } : {}) },
  };
}

/**
 * The value of PySpur's `prefixed_variable` (`<node id>-<output key>`, as the output-variables
 * listing names it) in a run's outputs by node id. Node ids may hold '-', so the longest node id
 * that prefixes the name wins. Undefined when the run has no such output.
 */
export function outputVariableOf(outputsById: Record<string, unknown>, variable: string): unknown {
  const nodeIds = Object.keys(outputsById).sort((a, b) => b.length - a.length);
  for (const nodeId of nodeIds) {
    if (!variable.startsWith(`${nodeId}-`)) continue;
    const outputs = outputsById[nodeId];
    const key = variable.slice(nodeId.length + 1);
    if (outputs !== null && typeof outputs === 'object' && Object.hasOwn(outputs, key))
      return (outputs as Record<string, unknown>)[key];
  }
  return undefined;
}

export interface OutputVariable {
  node_id: string;
  variable_name: string;
  prefixed_variable: string;
}

/** The output variables of a definition: each key of each leaf node's `output_schema` (PySpur's listing). */
export function leafOutputVariables(definition: {
  nodes: readonly { id: string; config: { output_schema?: unknown } }[];
  links: readonly { source_id: string }[];
}): OutputVariable[] {
  const sources = new Set(definition.links.map((l) => l.source_id));
  return definition.nodes
    .filter((n) => !sources.has(n.id))
    .flatMap((n) => {
      const schema = n.config.output_schema;
      if (!schema || typeof schema !== 'object' || Array.isArray(schema)) return [];
      return Object.keys(schema).map((key) => ({
        node_id: n.id,
        variable_name: key,
        prefixed_variable: `${n.id}-${key}`,
      }));
    });
}

import type { NodeInput } from '../types.js';

function declaredProperties(schema: Record<string, unknown>): string[] {
  const properties = schema.properties;
  return properties !== null && typeof properties === 'object' && !Array.isArray(properties)
    ? Object.keys(properties)
    : [];
}

/**
 * An MCP tool's arguments from a node's input: each property the tool's input schema declares,
 * taken from the input itself (an agent's call: the model's arguments) or else from the first
 * predecessor output that has it (a node in a graph: `{predecessor title: its output}`). Nothing
 * else is sent, so an argument the tool does not declare never reaches the server.
 */
export function toolArguments(input: NodeInput, inputSchema: Record<string, unknown>): Record<string, unknown> {
  const args: Record<string, unknown> = {};
  const outputs = Object.values(input).filter(
    (v): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v),
  );
  for (const name of declaredProperties(inputSchema)) {
    if (Object.hasOwn(input, name)) args[name] = input[name];
    else {
      const from = outputs.find((output) => Object.hasOwn(output, name));
      if (from) args[name] = from[name];
    }
  }
  return args;
}

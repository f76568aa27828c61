import type { GraphNode, ToolFields } from './run-contract';

/**
 * Config fields the workflow reads for every node it runs as an activity (its timeouts and
 * retries), whatever the node type declares.
 */
const RUN_POLICY_FIELDS: readonly string[] = ['timeout_seconds', 'heartbeat_timeout_seconds', 'max_retries'];

/** A tool call's arguments, split: the tool's config for this call and its input; or what the model may not set. */
export type ToolArguments = { config: Record<string, unknown>; input: Record<string, unknown> } | { refused: string[] };

/**
 * Models fill inputs, not configuration: an argument named like a settable field of the tool's node
 * type replaces the stored value for this call; any other config field is refused (the whole call,
 * so a call written by injected text does not run half-done); everything else is the tool's input.
 * The stored config is never read back to the model. `fields` absent (a tool the step did not
 * describe): nothing is settable.
 */
export function splitToolArguments(
  tool: GraphNode,
  args: Record<string, unknown>,
  fields: ToolFields | undefined,
): ToolArguments {
  const settable = new Set(fields?.settable ?? []);
  const configFields = new Set([...(fields?.config ?? []), ...RUN_POLICY_FIELDS]);
  const refused = Object.keys(args).filter((name) => configFields.has(name) && !settable.has(name));
  if (refused.length > 0) return { refused };
  // fromEntries defines own properties: an argument named `__proto__` stays a plain field.
  const entries = Object.entries(args);
  const config = { ...tool.config, ...Object.fromEntries(entries.filter(([name]) => settable.has(name))) };
  return { config, input: Object.fromEntries(entries.filter(([name]) => !settable.has(name))) };
}

/** The tool reply to a refused call: names only the fields the model sent, never a stored value. */
export function refusalMessage(refused: string[]): string {
  const names = refused.map((name) => `'${name}'`).join(', ');
  return `Error: ${refused.length > 1 ? 'fields' : 'field'} ${names} cannot be set by the model; call the tool again with its input and the settable fields its schema lists`;
}

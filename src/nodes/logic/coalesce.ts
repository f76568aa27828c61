import { NodeExecutionError } from '../errors.js';
import type { NodeInput, NodeOutput } from '../types.js';

/**
 * CoalesceNode's choice: the first non-null predecessor output, trying the
 * `preferences` titles in order (titles not in the input are skipped), then every input in link
 * order (PySpur's fallback order is hash order, which no user can predict). The chosen output is returned as it is. The engine cancels a coalesce whose inputs are
 * all null before running it; reaching that case here is an error.
 */
export function pickCoalesced(input: NodeInput, preferences: readonly string[]): NodeOutput {
  const titles = [...preferences.filter((title) => Object.hasOwn(input, title)), ...Object.keys(input)];
  for (const title of titles) {
    const value = input[title];
    if (value === null || value === undefined) continue;
    if (typeof value !== 'object' || Array.isArray(value)) {
      throw new NodeExecutionError(`Coalesce input '${title}' is not an object`);
    }
    return value as NodeOutput;
  }
  throw new NodeExecutionError('Coalesce has no non-null input');
}

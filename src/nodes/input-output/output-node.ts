import { z } from 'zod';
import { extendConfig } from '../base-config.js';
import { openObject } from '../shared-models.js';
import { NodeExecutionError } from '../errors.js';
import { valueAtPath } from '../paths.js';
import type { NodeOutput, NodeTypeDefinition } from '../types.js';

const config = extendConfig({
  /** Output field → `PredecessorTitle.path` in this node's input. */
  output_map: z.record(z.string(), z.string()).default(() => ({})),
});

/** Picks fields out of its inputs by dotted path. */
export const outputNode: NodeTypeDefinition<typeof config> = {
  name: 'OutputNode',
  displayName: 'Output',
  category: 'Input/Output',
  visualTag: { acronym: 'ON', color: '#17A2B8' },
  config,
  input: openObject(),
  output: openObject(),
  async execute(config, input) {
    const entries = Object.entries(config.output_map ?? {});
    // PySpur fails on an empty map (its default chatbot OutputNode has one); passing the inputs
    // through is what such a node is meant to do.
    if (entries.length === 0) return input;
    const output: NodeOutput = {};
    for (const [key, path] of entries) {
      const lookup = valueAtPath(input, path);
      if (!lookup.found) {
        throw new NodeExecutionError(`Output field '${key}': path '${path}' not found in the node's input`);
      }
      output[key] = lookup.value;
    }
    return output;
  },
};

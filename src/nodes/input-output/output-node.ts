import { z } from 'zod';
import { extendConfig } from '../base-config.js';
import { openObject } from '../shared-models.js';
import type { NodeTypeDefinition } from '../types.js';

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
  executionKind: 'pure',
};

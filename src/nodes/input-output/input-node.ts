import { z } from 'zod';
import { dynamicOutputDefaults, extendConfig } from '../base-config.js';
import { openObject } from '../shared-models.js';
import type { NodeTypeDefinition } from '../types.js';

const config = extendConfig({
  ...dynamicOutputDefaults({ input_1: { type: 'string' } }),
  enforce_schema: z.boolean().default(false),
});

/** Workflow entry point: its output is the run's input object for this node. */
export const inputNode: NodeTypeDefinition<typeof config> = {
  name: 'InputNode',
  displayName: 'Input',
  category: 'Input/Output',
  visualTag: { acronym: 'IN', color: '#6F42C1' },
  config,
  input: openObject(),
  output: openObject(),
};

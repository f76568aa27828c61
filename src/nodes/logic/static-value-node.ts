import { z } from 'zod';
import { extendConfig } from '../base-config.js';
import { openObject } from '../shared-models.js';
import type { NodeTypeDefinition } from '../types.js';

const config = extendConfig({
  values: z.record(z.string(), z.unknown()),
});

/** Outputs `values` as they are (it still needs an incoming link to run). */
export const staticValueNode: NodeTypeDefinition<typeof config> = {
  name: 'StaticValueNode',
  displayName: 'Static Value',
  category: 'Logic',
  visualTag: { acronym: 'CVN', color: '#20C997' },
  config,
  input: openObject(),
  output: openObject(),
  async execute(config) {
    return structuredClone(config.values);
  },
};

import { extendConfig } from '../base-config.js';
import { openObject } from '../shared-models.js';
import type { NodeTypeDefinition } from '../types.js';

const config = extendConfig({});

/** Output = its whole input, `{predecessor title: output}`. */
export const mergeNode: NodeTypeDefinition<typeof config> = {
  name: 'MergeNode',
  displayName: 'Merge',
  category: 'Logic',
  visualTag: { acronym: 'MN', color: '#6F42C1' },
  config,
  input: openObject(),
  output: null,
  async execute(_config, input) {
    return { ...input };
  },
};

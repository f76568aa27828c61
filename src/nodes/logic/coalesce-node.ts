import { z } from 'zod';
import { extendConfig } from '../base-config.js';
import { openObject } from '../shared-models.js';
import type { NodeTypeDefinition } from '../types.js';
import { pickCoalesced } from './coalesce.js';

const config = extendConfig({
  /** Predecessor titles to try first, in order. */
  preferences: z.array(z.string()).default(() => []),
});

/** Passes on the output of the first predecessor that produced one. */
export const coalesceNode: NodeTypeDefinition<typeof config> = {
  name: 'CoalesceNode',
  displayName: 'Coalesce',
  category: 'Logic',
  visualTag: { acronym: 'CN', color: '#28A745' },
  config,
  input: openObject(),
  output: null,
  async execute(config, input) {
    return pickCoalesced(input, config.preferences);
  },
};

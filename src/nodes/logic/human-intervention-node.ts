import { z } from 'zod';
import { extendConfig } from '../base-config.js';
import { openObject } from '../shared-models.js';
import type { NodeTypeDefinition } from '../types.js';

const config = extendConfig({
  message: z.string().default('Human intervention required'),
  /** Kept for compatibility: only dependents of the node are ever blocked. */
  block_only_dependent_nodes: z.boolean().default(true),
  /** Not in PySpur: a durable deadline after which `timeout_action` is applied by `system:timeout`. */
  timeout_seconds: z
    .number()
    .positive()
    .max(365 * 24 * 3600)
    .nullable()
    .optional(),
  timeout_action: z.enum(['APPROVE', 'DECLINE']).default('DECLINE'),
});

/** Pauses the run until a human acts; dependents wait, other branches go on. */
export const humanInterventionNode: NodeTypeDefinition<typeof config> = {
  name: 'HumanInterventionNode',
  displayName: 'HumanIntervention',
  description: 'Asks a human and waits for the answer; the arguments are shown to the human.',
  category: 'Logic',
  visualTag: { acronym: 'HIN', color: '#6610F2' },
  config,
  input: openObject(),
  output: openObject(),
};

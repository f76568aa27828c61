import { z } from 'zod';
import { MAX_LOOP_ITERATIONS } from '../../engine/for-loop.js';
import { extendConfig } from '../base-config.js';
import { openObject, subworkflowSchema } from '../shared-models.js';
import type { NodeTypeDefinition } from '../types.js';

const config = extendConfig({
  // PySpur accepts 0 and then crashes; rejecting it up front is the useful behaviour.
  num_iterations: z.number().int().min(1).max(MAX_LOOP_ITERATIONS).default(1),
  /** Child input field → `PredecessorTitle.path`. */
  input_map: z.record(z.string(), z.string()).nullish(),
  /** The child graph; the server fills it from the nodes whose `parent_id` is this loop. */
  subworkflow: subworkflowSchema,
});

/** Runs its child graph `num_iterations` times, feeding each round the previous one's output. */
export const forLoopNode: NodeTypeDefinition<typeof config> = {
  name: 'ForLoopNode',
  displayName: 'ForLoopNode',
  category: 'Experimental',
  visualTag: { acronym: 'FL', color: '#00BFFF' },
  config,
  input: openObject(),
  output: openObject(),
};

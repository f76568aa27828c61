import { z } from 'zod';
import { extendConfig } from '../base-config.js';
import { openObject } from '../shared-models.js';
import { NodeExecutionError } from '../errors.js';
import type { NodeTypeDefinition } from '../types.js';

/**
 * A field of the child's InputNode: a plain name. JSON's own `__proto__` key never reaches this
 * check (the parsed record drops it, so a run never maps it); saving refuses it (definition-rules.ts).
 */
const childField = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,99}$/, 'a field name (letters, digits, underscores)');

/**
 * The config of a SubworkflowNode, checked when a definition is saved (definition-rules.ts) and
 * read by the run that starts the child (src/runs/subworkflow-runs.ts).
 */
export const subworkflowConfig = extendConfig({
  /**
   * The workflow run as the child: one of the same workspace. Empty while a user is still filling
   * the node in (PySpur's editor saves the node as it is added): saved, but a run fails the node.
   */
  workflow_id: z
    .string()
    .regex(/^([A-Za-z0-9_-]{1,200})?$/, 'a workflow id (S<n>)')
    .default(''),
  /**
   * `latest`: the child's definition as it is when the node starts; `pinned`: its version when
   * the parent workflow was last saved (Spur records it in `pinned_version_id` at every save).
   */
  version: z.enum(['latest', 'pinned']).default('latest'),
  /** Child InputNode field → `PredecessorTitle.path` in this node's input; empty: the input as is. */
  input_map: z.record(childField, z.string().max(1000)).default(() => ({})),
  /** Written by Spur when the parent is saved with `version: "pinned"`; whatever a client sends is replaced. */
  pinned_version_id: z.string().max(200).nullable().default(null),
});
export type SubworkflowConfig = z.output<typeof subworkflowConfig>;

/** Runs another workflow of the workspace as a child run; its OutputNode's output is this node's. */
export const subworkflowNode: NodeTypeDefinition<typeof subworkflowConfig> = {
  name: 'SubworkflowNode',
  displayName: 'Subworkflow',
  description: "Runs another workflow of this workspace as a child run and returns its OutputNode's output.",
  category: 'Logic',
  visualTag: { acronym: 'SWN', color: '#20C997' },
  config: subworkflowConfig,
  input: openObject(),
  output: openObject(),
  // A run's workflow starts the child itself (temporal/workflows/subworkflow-call.ts); reached
  // only where no run can own a child: a batch chunk's inline rows, a partial run, a loop body.
  async execute() {
    throw new NodeExecutionError(
      'A SubworkflowNode runs only as a top-level node of a run (not in a partial run, an inline batch row or a loop)',
    );
  },
};

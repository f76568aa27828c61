import type { z } from 'zod';
import { NodeExecutionError } from '../errors.js';
import { openObject } from '../shared-models.js';
import type { NodeTypeDefinition } from '../types.js';

/**
 * The longest a WaitNode sleeps or a WaitForCallbackNode waits: a year, as a human pause's timeout.
 * Longer asks are a mistake (a unit confused), and a run kept open for years outlives its history's
 * retention.
 */
export const WAIT_MAX_SECONDS = 365 * 24 * 3600;

/**
 * A node its run's workflow waits for (a timer, a callback: temporal/workflows/wait-desk.ts):
 * `execute` is reached only where no workflow waits (an agent's tool call), and says so.
 */
export function workflowWaitedNode<Config extends z.ZodObject>(
  node: Pick<NodeTypeDefinition<Config>, 'name' | 'displayName' | 'description' | 'config'> & { acronym: string },
): NodeTypeDefinition<Config> {
  return {
    name: node.name,
    displayName: node.displayName,
    description: node.description,
    category: 'Logic',
    visualTag: { acronym: node.acronym, color: '#6C757D' },
    config: node.config,
    input: openObject(),
    output: openObject(),
    async execute() {
      throw new NodeExecutionError(
        `${node.name} waits only at the top level of a run: not inside a ForLoopNode or as an agent's tool`,
      );
    },
  };
}

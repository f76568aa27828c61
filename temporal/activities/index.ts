import type { Models } from '../../src/db/models';
import { createBatchActivities } from './batch.activities';
import { createChatActivities } from './chat.activities';
import { createAgentActivities } from './agent-step.activity';
import { createNodeActivities } from './execute-node.activity';
import { createProjectionActivities } from './projection.activities';

export interface ActivityDeps {
  models: Models;
  secret(name: string): Promise<string | undefined>;
}

/** Activities get their dependencies by closure (plain factory, no container). */
export function createActivities(deps: ActivityDeps) {
  return {
    ...createProjectionActivities(deps.models),
    ...createNodeActivities(deps),
    ...createBatchActivities(deps),
    ...createChatActivities(deps.models),
    ...createAgentActivities(deps),
  };
}

export type ProjectionActivities = ReturnType<typeof createProjectionActivities>;
export type BatchActivities = ReturnType<typeof createBatchActivities>;
export type ChatActivities = ReturnType<typeof createChatActivities>;

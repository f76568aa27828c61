import type { Models } from '../../src/db/models';
import type { PythonSandbox } from '../../src/nodes/code-execution/python-sandbox';
import { createBatchActivities } from './batch.activities';
import { createNodeActivities } from './execute-node.activity';
import { createProjectionActivities } from './projection.activities';

export interface ActivityDeps {
  models: Models;
  secret(name: string): Promise<string | undefined>;
  pythonSandbox?: PythonSandbox;
}

/** Activities get their dependencies by closure (plain factory, no container). */
export function createActivities(deps: ActivityDeps) {
  return {
    ...createProjectionActivities(deps.models),
    ...createNodeActivities(deps),
    ...createBatchActivities(deps),
  };
}

export type ProjectionActivities = ReturnType<typeof createProjectionActivities>;
export type BatchActivities = ReturnType<typeof createBatchActivities>;

import type { Models } from '../../src/db/models';
import { createBatchActivities } from './batch.activities';
import { createNodeActivities } from './execute-node.activity';
import { createProjectionActivities } from './projection.activities';
import { createReconcileActivities } from './reconcile.activities';

export interface ActivityDeps {
  models: Models;
  secret(name: string): Promise<string | undefined>;
  /** The queue and workflow-id prefix this worker serves (the reconciler starts runs there). */
  temporal: { taskQueue: string; workflowIdPrefix: string };
}

/** Activities get their dependencies by closure (plain factory, no container). */
export function createActivities(deps: ActivityDeps) {
  return {
    ...createProjectionActivities(deps.models),
    ...createNodeActivities(deps),
    ...createBatchActivities(deps),
    ...createReconcileActivities(deps),
  };
}

export type ProjectionActivities = ReturnType<typeof createProjectionActivities>;
export type BatchActivities = ReturnType<typeof createBatchActivities>;
export type ReconcileActivities = ReturnType<typeof createReconcileActivities>;

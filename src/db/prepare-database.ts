import { type Models, syncIndexes } from './models';
import { migrateToWorkspaces } from './workspaces';
import { markRunsWithAttempts } from './runs/node-attempts';

/**
 * What every process does before its first request or task: every collection and index in place,
 * an installation from before workspaces moved into `default`, and runs with failed attempts
 * recorded without a mark marked (node-attempts.ts).
 */
export async function prepareDatabase(models: Models): Promise<void> {
  await syncIndexes(models);
  await migrateToWorkspaces(models);
  await markRunsWithAttempts(models);
}

import { type Models, syncIndexes } from './models';
import { migrateToWorkspaces } from './workspaces';

/**
 * What every process does before its first request or task: every collection and index in place,
 * and an installation from before workspaces moved into `default`.
 */
export async function prepareDatabase(models: Models): Promise<void> {
  await syncIndexes(models);
  await migrateToWorkspaces(models);
}

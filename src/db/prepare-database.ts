import { type Models, syncIndexes } from './models';
import { migrateToWorkspaces } from './workspaces';
import { markRunsWithAttempts } from './runs/node-attempts';
import { markPausesWithDeliveries } from './runs/approval-deliveries';

/**
 * What every process does before its first request or task: every collection and index in place,
 * an installation from before workspaces moved into `default`, and runs with failed attempts and
 * pauses with approval messages recorded without a mark marked (owner-marks.ts).
 */
export async function prepareDatabase(models: Models): Promise<void> {
  await syncIndexes(models);
  await migrateToWorkspaces(models);
  await markRunsWithAttempts(models);
  await markPausesWithDeliveries(models);
}

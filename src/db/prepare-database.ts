import { type Models, syncIndexes } from './models';
import { migrateToWorkspaces } from './workspaces';
import { markRunsWithAttempts } from './runs/node-attempts';
import { markPausesWithDeliveries } from './runs/approval-deliveries';

/**
 * What every process does before its first request or task: every collection and index in place,
 * and an installation from before workspaces moved into `default`.
 */
export async function prepareDatabase(models: Models): Promise<void> {
  await syncIndexes(models);
  await migrateToWorkspaces(models);
}

/** Where a failure is reported: the process's logger (the database floor does not import the logger). */
export interface WarnLog {
  warn(fields: { err: string }, message: string): void;
}

/**
 * What an api process does once it serves, in the background: marks the runs with failed attempts
 * and the pauses with approval messages that an earlier version or an older worker recorded without
 * a mark (owner-marks.ts), so its reads find them. It scans both collections (seconds on FerretDB with
 * tens of thousands of records), so it does not hold the start up; workers skip it, since they write
 * marks and do not read them, and an upgrade restarts the workers before the api.
 */
export function markOlderRecordsInBackground(models: Models, log: WarnLog): Promise<void> {
  return (async () => {
    await markRunsWithAttempts(models);
    await markPausesWithDeliveries(models);
  })().catch((err: unknown) => {
    log.warn(
      { err: String(err) },
      'older failed attempts and approval messages not marked: they stay unlisted until the next start',
    );
  });
}

import type { Client } from '@temporalio/client';
import type { Config } from '../src/config/settings';
import type { Logger } from '../src/logger';
import type { RetentionPassInput } from '../src/contracts/retention-contract';
import { WorkflowType } from '../src/contracts/workflow-names';
import { upsertSchedule } from './upsert-schedule';

/** Once a day: retention is counted in days. */
export const RETENTION_EVERY_MS = 86_400_000;
const PASS: RetentionPassInput = { pageSize: 100 };

export const retentionScheduleId = (prefix: string) => `${prefix}spur-retention`;

/**
 * Creates or updates the Temporal Schedule of run retention (upsert-schedule.ts). It exists whatever
 * SPUR_RUN_RETENTION_DAYS says, since a workflow may set its own retention at any time; a pass with
 * no retention anywhere deletes nothing.
 */
export function ensureRetentionSchedule(client: Client, config: Pick<Config, 'temporal'>, logger: Logger) {
  const prefix = config.temporal.workflowIdPrefix;
  return upsertSchedule(
    client,
    config,
    {
      scheduleId: retentionScheduleId(prefix),
      workflowId: `${prefix}spur-retention`,
      workflowType: WorkflowType.spurRetention,
      args: [PASS],
      everyMs: RETENTION_EVERY_MS,
      summary: 'Spur run retention: finished runs past their workflow’s retention',
      catchupWindow: '1h',
    },
    logger,
  );
}

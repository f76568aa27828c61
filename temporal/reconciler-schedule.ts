import { type Client, ScheduleNotFoundError } from '@temporalio/client';
import type { Config } from '../src/config/settings';
import type { Logger } from '../src/logger';
import type { ReconcileInput } from '../src/contracts/reconcile-contract';
import { WorkflowType } from '../src/contracts/workflow-names';
import { upsertSchedule } from './upsert-schedule';

/** Runs looked at per activity, and pages per pass: a pass inspects at most 2 000 open runs. */
const PASS: Omit<ReconcileInput, 'graceMs'> = { pageSize: 100, maxPages: 20 };

export const reconcilerScheduleId = (prefix: string) => `${prefix}spur-reconciler`;

/** Creates or updates the reconciler's Temporal Schedule (upsert-schedule.ts); cadence 0 removes it. */
export async function ensureReconcilerSchedule(
  client: Client,
  config: Pick<Config, 'temporal' | 'reconcile'>,
  logger: Logger,
): Promise<void> {
  const id = reconcilerScheduleId(config.temporal.workflowIdPrefix);
  const handle = client.schedule.getHandle(id);
  if (config.reconcile.everyMs === 0) {
    await handle.delete().catch((err: unknown) => {
      if (!(err instanceof ScheduleNotFoundError)) throw err;
    });
    return;
  }
  const input: ReconcileInput = { ...PASS, graceMs: config.reconcile.graceMs };
  await upsertSchedule(
    client,
    config,
    {
      scheduleId: id,
      workflowId: `${config.temporal.workflowIdPrefix}spur-reconcile`,
      workflowType: WorkflowType.spurReconcile,
      args: [input],
      everyMs: config.reconcile.everyMs,
      summary: 'Spur reconciler: runs whose workflow is gone or never started',
      catchupWindow: '1m',
      // A pass no worker picks up is dropped before the next one is due.
      executionTimeoutMs: Math.max(config.reconcile.everyMs, 60_000),
    },
    logger,
  );
}

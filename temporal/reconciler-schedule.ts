import {
  type Client,
  ScheduleAlreadyRunning,
  ScheduleNotFoundError,
  type ScheduleOptionsAction,
} from '@temporalio/client';
import type { Config } from '../src/config/settings';
import type { Logger } from '../src/logger';
import type { ReconcileInput } from '../src/contracts/reconcile-contract';
import { WorkflowType } from '../src/contracts/workflow-names';

/** Runs looked at per activity, and pages per pass: a pass inspects at most 2 000 open runs. */
const PASS: Omit<ReconcileInput, 'graceMs'> = { pageSize: 100, maxPages: 20 };

export const reconcilerScheduleId = (prefix: string) => `${prefix}spur-reconciler`;

/**
 * Creates or updates the reconciler's Temporal Schedule (idempotent: every worker calls it at start,
 * the last one's settings win, and all workers of a queue share one config). Cadence 0 removes it.
 * A pass that is still going when the next is due makes the next one skip.
 */
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
  const action: ScheduleOptionsAction = {
    type: 'startWorkflow',
    workflowType: WorkflowType.spurReconcile,
    workflowId: `${config.temporal.workflowIdPrefix}spur-reconcile`,
    taskQueue: config.temporal.taskQueue,
    args: [input],
    // A pass no worker picks up is dropped before the next one is due.
    workflowExecutionTimeout: Math.max(config.reconcile.everyMs, 60_000),
    staticSummary: 'Spur reconciler: runs whose workflow is gone or never started',
  };
  const spec = { intervals: [{ every: config.reconcile.everyMs }] };
  const policies = { overlap: 'SKIP' as const, catchupWindow: '1m' };
  try {
    await client.schedule.create({ scheduleId: id, spec, action, policies });
    logger.info({ scheduleId: id, everyMs: config.reconcile.everyMs }, 'reconciler schedule created');
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
    await handle.update((previous) => ({ ...previous, spec, action, policies: { ...previous.policies, ...policies } }));
    logger.info({ scheduleId: id, everyMs: config.reconcile.everyMs }, 'reconciler schedule updated');
  }
}

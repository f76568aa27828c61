import { type Client, ScheduleAlreadyRunning, type ScheduleOptionsAction } from '@temporalio/client';
import type { Config } from '../src/config/settings';
import type { Logger } from '../src/logger';

/** One of the fleet's Schedules: a workflow of the installation's queue started every `everyMs`. */
export interface FleetSchedule {
  scheduleId: string;
  workflowId: string;
  workflowType: string;
  args: unknown[];
  everyMs: number;
  /** Shown in the Temporal Web UI. */
  summary: string;
  /** A fire missed (no server up) is still made this long after its time. */
  catchupWindow: string;
  /** A pass no worker picks up is dropped after this long. */
  executionTimeoutMs?: number;
}

/**
 * Creates a fleet Schedule, or updates the one already there to these settings: every worker calls
 * it at start and the last one's settings win (all workers of a queue share one config). A pass
 * still going when the next is due makes the next one skip.
 */
export async function upsertSchedule(
  client: Client,
  config: Pick<Config, 'temporal'>,
  schedule: FleetSchedule,
  logger: Logger,
): Promise<void> {
  const { scheduleId, everyMs } = schedule;
  const action: ScheduleOptionsAction = {
    type: 'startWorkflow',
    workflowType: schedule.workflowType,
    workflowId: schedule.workflowId,
    taskQueue: config.temporal.taskQueue,
    args: schedule.args,
    ...(schedule.executionTimeoutMs ? { workflowExecutionTimeout: schedule.executionTimeoutMs } : {}),
    staticSummary: schedule.summary,
  };
  const spec = { intervals: [{ every: everyMs }] };
  const policies = { overlap: 'SKIP' as const, catchupWindow: schedule.catchupWindow };
  try {
    await client.schedule.create({ scheduleId, spec, action, policies });
    logger.info({ scheduleId, everyMs }, 'schedule created');
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
    await client.schedule
      .getHandle(scheduleId)
      .update((previous) => ({ ...previous, spec, action, policies: { ...previous.policies, ...policies } }));
    logger.info({ scheduleId, everyMs }, 'schedule updated');
  }
}

import { temporal } from '@temporalio/proto';
import { runWorkflowId } from '../../src/contracts/workflow-names';
import type { Engine } from './engine';
import { until } from './exec-log';
import { timestampMs } from './node-attempts';

/**
 * A run's Temporal history once its workflow has closed. A blocking run is answered from its final
 * save, which a worker in the api's process makes before the workflow task recording it completes:
 * read at once, the history can lack that task's events.
 */
export async function closedRunHistory(engine: Engine, runId: string): Promise<temporal.api.history.v1.IHistory> {
  const handle = runHandle(engine, runId);
  await handle.result().catch(() => undefined);
  return handle.fetchHistory();
}

/**
 * Waits until an open run's history records a durable timer (a WaitNode's sleep): from then a lost
 * worker cannot take the wait's start back. Before, the save that shows the wait may already be
 * written while the workflow task that starts the timer is still to be recorded.
 */
export function untilTimerRecorded(engine: Engine, runId: string, timeoutMs = 60_000): Promise<void> {
  const handle = runHandle(engine, runId);
  return until(
    `run ${runId}'s timer in its history`,
    async () => ((await handle.fetchHistory()).events ?? []).some((e) => e.timerStartedEventAttributes),
    timeoutMs,
  );
}

/** The activity types of a run's local activities, in the order the history recorded them. */
export async function localActivityTypes(engine: Engine, runId: string): Promise<string[]> {
  const history = await closedRunHistory(engine, runId);
  return (history.events ?? []).flatMap((e) => {
    const marker = e.markerRecordedEventAttributes;
    if (marker?.markerName !== 'core_local_activity') return [];
    const data = marker.details?.data?.payloads?.[0]?.data;
    return data ? [(JSON.parse(Buffer.from(data).toString('utf8')) as { activity_type: string }).activity_type] : [];
  });
}

/**
 * The largest payload (workflow input, activity input or result, marker) in a run's Temporal
 * history, and how many events it has: what values by reference keep small.
 */
export async function largestHistoryPayload(engine: Engine, runId: string): Promise<{ bytes: number; events: number }> {
  const history = await closedRunHistory(engine, runId);
  let bytes = 0;
  const walk = (v: unknown) => {
    if (v instanceof Uint8Array) bytes = Math.max(bytes, v.length);
    else if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') Object.values(v).forEach(walk);
  };
  walk(history.events);
  return { bytes, events: history.events?.length ?? 0 };
}

/**
 * What a run's workflow is doing, for the message of a test whose run did not end: its status, the
 * activities it waits for (with their attempts and last failures) and the last events of its history.
 */
export async function runWorkflowReport(engine: Engine, runId: string, lastEvents = 15): Promise<string> {
  const handle = runHandle(engine, runId);
  try {
    const { raw, status } = await handle.describe();
    const pending = (raw.pendingActivities ?? []).map(
      (a) => `${a.activityType?.name} attempt ${a.attempt} ${a.lastFailure?.message ?? ''}`,
    );
    const events = (await handle.fetchHistory()).events ?? [];
    const counts = new Map<string, number>();
    for (const e of events) {
      const type = eventName(e.eventType);
      counts.set(type, (counts.get(type) ?? 0) + 1);
    }
    const tail = events.slice(-lastEvents).map((e) => {
      const taskFailed = e.workflowTaskFailedEventAttributes;
      const failure =
        (taskFailed
          ? `${temporal.api.enums.v1.WorkflowTaskFailedCause[taskFailed.cause ?? 0] ?? ''} ${taskFailed.failure?.message ?? ''}`
          : undefined) ??
        e.activityTaskFailedEventAttributes?.failure?.message ??
        e.workflowTaskTimedOutEventAttributes?.timeoutType ??
        e.markerRecordedEventAttributes?.failure?.message ??
        '';
      return `#${String(e.eventId)} ${eventName(e.eventType)} ${failure}`.trim();
    });
    return [
      `workflow ${status.name}, ${events.length} events`,
      `event counts: ${[...counts].map(([t, c]) => `${t}=${c}`).join(' ')}`,
      `pending activities: ${pending.join('; ') || 'none'}`,
      `last events:\n  ${tail.join('\n  ')}`,
    ].join('\n');
  } catch (err) {
    return `(no report: ${(err as Error).message})`;
  }
}

/**
 * When Temporal last started the run's (first) pending activity and last heard its heartbeat, by the
 * server's clock (null: not started, or no heartbeat yet).
 */
export async function pendingActivityTimes(
  engine: Engine,
  runId: string,
): Promise<{ startedMs: number | null; heartbeatMs: number | null }> {
  const pending = (await runHandle(engine, runId).describe()).raw.pendingActivities?.[0];
  return {
    startedMs: pending?.lastStartedTime ? timestampMs(pending.lastStartedTime) : null,
    heartbeatMs: pending?.lastHeartbeatTime ? timestampMs(pending.lastHeartbeatTime) : null,
  };
}

/** A run's Temporal workflow, by the run's id and the engine's workflow-id prefix. */
function runHandle(engine: Engine, runId: string) {
  return engine.api.temporal.workflow.getHandle(runWorkflowId(runId, engine.api.config.temporal.workflowIdPrefix));
}

function eventName(type: temporal.api.enums.v1.EventType | null | undefined): string {
  return type == null ? 'unknown' : (temporal.api.enums.v1.EventType[type] ?? String(type)).replace(/^EVENT_TYPE_/, '');
}

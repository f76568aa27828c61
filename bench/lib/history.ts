// Reading Temporal histories in benches: event names and times, and a tally of a history's events.
import { Client, Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';

export type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

/** `WORKFLOW_TASK_STARTED`, … (the enum's name without its `EVENT_TYPE_` prefix). */
export const eventName = (e: HistoryEvent) =>
  (temporal.api.enums.v1.EventType[e.eventType ?? 0] ?? '?').replace(/^EVENT_TYPE_/, '');

/** When the server recorded the event, in epoch milliseconds. */
export const eventMs = (e: HistoryEvent) => Number(e.eventTime?.seconds ?? 0) * 1000 + (e.eventTime?.nanos ?? 0) / 1e6;

/** How many events of each type a history holds. */
export function tallyEvents(events: HistoryEvent[]): Record<string, number> {
  const tally: Record<string, number> = {};
  for (const e of events) tally[eventName(e)] = (tally[eventName(e)] ?? 0) + 1;
  return tally;
}

/** A Temporal client on a connection of its own for the time of `use`. */
export async function withTemporalClient<T>(address: string, use: (client: Client) => Promise<T>): Promise<T> {
  const connection = await Connection.connect({ address });
  try {
    return await use(new Client({ connection }));
  } finally {
    await connection.close();
  }
}

/**
 * How long each completed activity of `activityType` ran, in milliseconds: from its start on a
 * worker to its completion, both as the server recorded them (the time on the task queue left out).
 */
export function activityRunMs(events: HistoryEvent[], activityType: string): number[] {
  const byId = new Map(events.map((e) => [String(e.eventId), e]));
  const durations: number[] = [];
  for (const e of events) {
    const done = e.activityTaskCompletedEventAttributes;
    if (!done) continue;
    const scheduled = byId.get(String(done.scheduledEventId));
    const started = byId.get(String(done.startedEventId));
    if (scheduled?.activityTaskScheduledEventAttributes?.activityType?.name !== activityType || !started) continue;
    durations.push(eventMs(e) - eventMs(started));
  }
  return durations;
}

/**
 * How long a history's tasks waited on the task queue, in milliseconds: from each workflow task's
 * and activity's scheduling to its start on a worker (an eager one starts at once).
 */
export function queueWaitMs(events: HistoryEvent[]): number {
  const at = new Map(events.map((e) => [String(e.eventId), eventMs(e)]));
  let waited = 0;
  for (const e of events) {
    const scheduledId = (e.workflowTaskStartedEventAttributes ?? e.activityTaskStartedEventAttributes)
      ?.scheduledEventId;
    const scheduledAt = scheduledId === undefined || scheduledId === null ? undefined : at.get(String(scheduledId));
    if (scheduledAt !== undefined) waited += eventMs(e) - scheduledAt;
  }
  return waited;
}

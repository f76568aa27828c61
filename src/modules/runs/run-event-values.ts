import type { RunEvents, StoredRunEvent } from '../../db/runs/run-events';
import type { Values } from '../../db/values';
import { VALUE_REF_KEY } from '../../engine/value-ref';

/**
 * A run's stored events as its streams send them. An event carries values up to 16 KiB inline,
 * counted at their stored size (src/engine/run-events.ts); when SPUR_VALUE_REF_BYTES is below that,
 * such a value is still a reference in the stored event, and is read back here: a client reads the
 * value, never `__spur_value_ref__` in its place. What is read is at most those 16 KiB an event.
 */
export function eventsWithValues(
  events: Pick<RunEvents, 'after'>,
  values: Pick<Values, 'holdsRefs' | 'resolve'>,
): Pick<RunEvents, 'after'> {
  async function withValues(event: StoredRunEvent): Promise<StoredRunEvent> {
    // Most events hold no ref: their text is sent as stored, never parsed.
    if (!event.data.includes(VALUE_REF_KEY)) return event;
    const data: unknown = JSON.parse(event.data);
    if (!values.holdsRefs(data)) return event;
    return { ...event, data: JSON.stringify(await values.resolve(data)) };
  }
  return {
    after: async (runId, afterSeq, limit) => Promise.all((await events.after(runId, afterSeq, limit)).map(withValues)),
  };
}

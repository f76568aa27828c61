import assert from 'node:assert/strict';
import { type CallbackReceiver, startCallbackReceiver } from '../support/callback-receiver';
import { type Engine, startEngine } from '../support/engine';
import { input, l, n } from '../support/graphs';
import type { WorkflowHandle } from '@temporalio/client';
import { callbackWorkflowId } from '../../src/contracts/callback-contract';

const pure = { nodes: [input(), n('out', 'OutputNode', { output_map: { answer: 'in.x' } })], links: [l('in', 'out')] };
const FIRST_MS = 1000;
const MAX_MS = 8000;
/** The waits a schedule of `factor` from FIRST_MS gives, capped at MAX_MS. */
const schedule = (factor: number, count: number) =>
  Array.from({ length: count }, (_, i) => Math.min(FIRST_MS * factor ** i, MAX_MS));
/** A wait a receiver sees is never shorter than the schedule's (Temporal does not retry early); a loaded host adds to it. */
const SOONER_MS = 100;
/** How far the gap between Temporal's two reported times may be from the backoff's figure. */
const SCHEDULE_SLACK_MS = 5;

const msOf = (t: { seconds?: unknown; nanos?: number | null } | null | undefined) =>
  t ? Number(t.seconds ?? 0) * 1000 + (t.nanos ?? 0) / 1e6 : NaN;

/**
 * Temporal's own schedule of an activity's retries, read while they happen: for each attempt that
 * failed, how long after its end the next one was due. Polled every 100 ms; every wait here lasts
 * a second or more.
 */
async function retryWaits(handle: WorkflowHandle, count: number, timeoutMs: number): Promise<number[]> {
  const waits = new Map<number, number>();
  const deadline = Date.now() + timeoutMs;
  while (waits.size < count) {
    if (Date.now() > deadline) throw new Error(`saw ${waits.size} of ${count} retry waits: ${[...waits.values()]}`);
    const pending = (await handle.describe()).raw.pendingActivities?.[0];
    if (pending?.nextAttemptScheduleTime && pending.lastAttemptCompleteTime)
      waits.set(pending.attempt ?? 0, msOf(pending.nextAttemptScheduleTime) - msOf(pending.lastAttemptCompleteTime));
    await new Promise((r) => setTimeout(r, 100));
  }
  return [...waits.entries()].sort(([a], [b]) => a - b).map(([, wait]) => wait);
}

describe('e2e: callback delivery backs off, doubling up to its maximum', function () {
  this.timeout(180_000);
  let engine: Engine;
  let receiver: CallbackReceiver;
  before(async () => {
    receiver = await startCallbackReceiver();
    engine = await startEngine({
      SPUR_CALLBACK_RETRY_FIRST_SECONDS: String(FIRST_MS / 1000),
      SPUR_CALLBACK_RETRY_MAX_SECONDS: String(MAX_MS / 1000),
    });
  });
  after(async () => {
    await engine?.close();
    await receiver?.close();
  });

  it('waits 1, 2, 4, 8 and again 8 s between attempts a receiver answers 500: Temporal schedules the retries so, and the receiver sees none sooner', async () => {
    const wf = (await engine.http.post('/wf/', { name: 'backoff', definition: pure })).body;
    const path = '/hooks/backoff';
    receiver.script(path, 500, 500, 500, 500, 500);
    const res = await engine.http.post(`/wf/${wf.id}/start_run/`, {
      initial_inputs: { in: { x: 'b' } },
      callback: { url: `${receiver.url}${path}`, secret: 'backoff-secret' },
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const [first] = await receiver.waitFor(path, 1, 60_000);
    const deliveryId = String(first?.headers['x-spur-event-id']);
    const handle = engine.api.temporal.workflow.getHandle(
      callbackWorkflowId(engine.api.config.temporal.workflowIdPrefix, deliveryId),
    );
    const expected = schedule(2, 5);
    assert.deepEqual(expected, [1000, 2000, 4000, 8000, 8000]);
    // Temporal's schedule: a constant wait or a 1.5× backoff would differ by half a second at once.
    // Within a few milliseconds: the gap between the two times Temporal reports was seen at 8001 ms
    // for an 8 s wait on a loaded host.
    const waits = await retryWaits(handle, 5, 120_000);
    assert.equal(waits.length, expected.length);
    for (const [i, wait] of waits.entries())
      assert.ok(Math.abs(wait - (expected[i] as number)) <= SCHEDULE_SLACK_MS, `waits ${waits.join(', ')}`);
    const hits = await receiver.waitFor(path, 6, 120_000);
    const gaps = hits.slice(1).map((hit, i) => hit.at - (hits[i] as { at: number }).at);
    for (const [i, gap] of gaps.entries()) {
      const want = expected[i] as number;
      assert.ok(gap >= want - SOONER_MS, `gap ${i + 1}: ${gap} ms, sooner than ${want} ms (all: ${gaps.join(', ')})`);
    }
    assert.equal(hits.length, 6);
  });
});

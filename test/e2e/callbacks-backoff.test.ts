import assert from 'node:assert/strict';
import { type CallbackReceiver, startCallbackReceiver } from '../support/callback-receiver';
import { type Engine, startEngine } from '../support/engine';
import { input, l, n } from '../support/graphs';

const pure = { nodes: [input(), n('out', 'OutputNode', { output_map: { answer: 'in.x' } })], links: [l('in', 'out')] };
const FIRST_MS = 1000;
const MAX_MS = 8000;
/**
 * What a loaded machine may add to a wait (a worker slow to take the attempt): a quarter of the
 * wait and 600 ms. Never less than the schedule: Temporal does not retry early.
 */
const windowOf = (wantMs: number) => ({ min: wantMs - 100, max: wantMs * 1.25 + 600 });
/** The waits a schedule of `factor` from FIRST_MS gives, capped at MAX_MS. */
const schedule = (factor: number, count: number) =>
  Array.from({ length: count }, (_, i) => Math.min(FIRST_MS * factor ** i, MAX_MS));
const within = (gap: number, wantMs: number) => gap >= windowOf(wantMs).min && gap <= windowOf(wantMs).max;

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

  it("waits 1, 2, 4, 8 and again 8 s between attempts a receiver answers 500, by the receiver's own clock", async () => {
    const wf = (await engine.http.post('/wf/', { name: 'backoff', definition: pure })).body;
    const path = '/hooks/backoff';
    receiver.script(path, 500, 500, 500, 500, 500);
    const res = await engine.http.post(`/wf/${wf.id}/start_run/`, {
      initial_inputs: { in: { x: 'b' } },
      callback: { url: `${receiver.url}${path}`, secret: 'backoff-secret' },
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const hits = await receiver.waitFor(path, 6, 120_000);
    const gaps = hits.slice(1).map((hit, i) => hit.at - (hits[i] as { at: number }).at);
    const expected = schedule(2, 5);
    assert.deepEqual(expected, [1000, 2000, 4000, 8000, 8000]);
    // The windows are tight enough to tell a doubling from a constant wait and from a 1.5× backoff.
    for (const other of [schedule(1, 5), schedule(1.5, 5)])
      assert.ok(
        other.some((ms, i) => !within(ms, expected[i] as number)),
        `${other.join(', ')} would pass`,
      );
    for (const [i, gap] of gaps.entries()) {
      const want = expected[i] as number;
      assert.ok(within(gap, want), `gap ${i + 1}: ${gap} ms, expected ${want} ms (all: ${gaps.join(', ')})`);
    }
    assert.equal(hits.length, 6);
  });
});

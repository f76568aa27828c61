import assert from 'node:assert/strict';
import { type CallbackReceiver, startCallbackReceiver } from '../support/callback-receiver';
import { type Engine, startEngine } from '../support/engine';
import { input, l, n } from '../support/graphs';

const pure = { nodes: [input(), n('out', 'OutputNode', { output_map: { answer: 'in.x' } })], links: [l('in', 'out')] };
const FIRST_MS = 1000;
const MAX_MS = 8000;
/** What a loaded machine may add to a wait (a worker slow to take the attempt); far below a doubling. */
const SLACK_MS = 4000;

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
    const expected = [1, 2, 4, 8, 8].map((x) => x * FIRST_MS);
    for (const [i, gap] of gaps.entries()) {
      const want = expected[i] as number;
      // Never sooner than the schedule (each wait twice the one before, then the maximum), and
      // well short of the next doubling.
      assert.ok(
        gap >= want - 100 && gap < want + SLACK_MS,
        `gap ${i + 1}: ${gap} ms, expected ${want} ms (all: ${gaps.join(', ')})`,
      );
    }
    assert.equal(hits.length, 6);
  });
});

import assert from 'node:assert/strict';
import { decidePausedNode } from '../../src/engine/pause-decisions';

// The oracles are docs/runs.md ("Pauses for a human") written out by hand: APPROVE adds the
// human's inputs with the original's keys winning, OVERRIDE lets the human's inputs win, DECLINE
// cancels the node ("Declined by <user_id>") and its dependents, and ends the run CANCELED naming
// the user and the node.
describe('what a decision does to its paused node', () => {
  const gate = { id: 'n7', title: 'gate' };
  const pausedWith = { amount: 120, currency: 'EUR' };
  const human = { amount: 90, note: 'checked' };

  const completing = [
    {
      action: 'APPROVE',
      title: 'APPROVE: the original data plus the human inputs, the original keys winning; the node completes',
      output: { amount: 120, currency: 'EUR', note: 'checked' },
    },
    {
      action: 'OVERRIDE',
      title: 'OVERRIDE: the human inputs win over the original data; the node completes',
      output: { amount: 90, currency: 'EUR', note: 'checked' },
    },
  ] as const;
  for (const { action, title, output } of completing)
    it(title, () => {
      assert.deepEqual(decidePausedNode(gate, pausedWith, { action, userId: 'ada', inputs: human }), {
        task: { status: 'COMPLETED', outputs: output, error: null },
        state: { status: 'COMPLETED', output },
        runDeclined: null,
      });
    });

  it('APPROVE or OVERRIDE with no inputs: the node passes its data on unchanged', () => {
    for (const action of ['APPROVE', 'OVERRIDE'] as const) {
      const decided = decidePausedNode(gate, pausedWith, { action, userId: 'ada', inputs: {} });
      assert.deepEqual(decided.state, { status: 'COMPLETED', output: { amount: 120, currency: 'EUR' } }, action);
    }
  });

  it('DECLINE: the node is cancelled by the user, not failed, with no output; the run ends naming user and node', () => {
    const decided = decidePausedNode(gate, pausedWith, { action: 'DECLINE', userId: 'carol', inputs: human });
    assert.deepEqual(decided, {
      task: { status: 'CANCELED', outputs: null, error: 'Declined by carol' },
      state: { status: 'CANCELED', upstreamFailure: false },
      runDeclined: "Declined by carol at node 'gate' (n7)",
    });
  });

  it('leaves the data the node paused with and the human inputs as they were', () => {
    const inputs = { ...human };
    decidePausedNode(gate, pausedWith, { action: 'OVERRIDE', userId: 'ada', inputs });
    assert.deepEqual(pausedWith, { amount: 120, currency: 'EUR' });
    assert.deepEqual(inputs, { amount: 90, note: 'checked' });
  });
});

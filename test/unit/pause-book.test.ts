import assert from 'node:assert/strict';
import { type OpenPause, PauseBook } from '../../temporal/workflows/pause-book';
import type { PauseActionRequest } from '../../src/contracts/pauses';

const approve = (userId: string, pauseId?: string): PauseActionRequest => ({
  action: 'APPROVE',
  inputs: {},
  userId,
  comments: null,
  ...(pauseId ? { pauseId } : {}),
});

/** The pause resolved as `userId` approved it (what the run does once the decision is applied). */
function resolveApproved(book: PauseBook, pause: OpenPause, userId: string): void {
  book.resolved(pause, {
    pauseId: pause.pauseId,
    action: 'APPROVE',
    userId,
    comments: null,
    resumeTime: new Date(0).toISOString(),
    decisions: pause.decisions,
  });
}

// The run's workflow state for its pauses. A workflow task that timed out after its local activity
// wrote the pause record is run again from the start, with the api's signal for that recorded
// pause delivered before the graph reaches it: the decision must wait for the pause, not vanish.
describe('the pause book of a run', () => {
  it('applies a signalled decision for a pause the run has not reached yet when that pause opens', () => {
    const book = new PauseBook('R1');
    book.decideIfOpen(approve('ops', 'R1:gate:1'));
    assert.equal(book.openCount, 0);
    const pause = book.add('gate');
    assert.equal(pause.pauseId, 'R1:gate:1');
    assert.equal(pause.decision?.userId, 'ops');
    assert.deepEqual(
      pause.decisions.map((d) => d.user_id),
      ['ops'],
    );
  });

  it('keeps a decision for a later pause of the same node for that pause, not the first', () => {
    const book = new PauseBook('R1');
    book.decideIfOpen(approve('ops', 'R1:gate:2'));
    const first = book.add('gate');
    assert.equal(first.decision, null);
    book.resolved(first, {
      pauseId: first.pauseId,
      action: 'APPROVE',
      userId: 'someone',
      comments: null,
      resumeTime: new Date(0).toISOString(),
      decisions: [],
    });
    assert.equal(book.add('gate').decision?.userId, 'ops');
  });

  it('drops a signalled decision for a pause that was already settled', () => {
    const book = new PauseBook('R1');
    const pause = book.add('gate');
    book.decideIfOpen(approve('first', pause.pauseId));
    resolveApproved(book, pause, 'first');
    book.decideIfOpen(approve('late', pause.pauseId));
    const next = book.add('gate');
    assert.equal(next.decision, null, 'the late signal for pause 1 did not decide pause 2');
    assert.equal(book.openCount, 1);
  });

  it('refuses an action for a pause it has not reached yet saying it is ahead, and one for a pause it resolved saying it is not', () => {
    const book = new PauseBook('R1');
    const detailsOf = (request: PauseActionRequest): unknown[] => {
      try {
        book.validate(request);
      } catch (err) {
        return (err as { details?: unknown[] }).details ?? [];
      }
      assert.fail('the action was not refused');
    };
    assert.deepEqual(detailsOf(approve('ops', 'R1:gate:1')), [null, true]);
    assert.deepEqual(detailsOf(approve('ops')), [null, false]);
    const pause = book.add('gate');
    book.decide(approve('ops', pause.pauseId));
    resolveApproved(book, pause, 'ops');
    assert.deepEqual(detailsOf(approve('erin', pause.pauseId)), [{ action: 'APPROVE', userId: 'ops' }, false]);
  });
});

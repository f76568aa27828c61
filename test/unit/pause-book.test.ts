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

  it("refuses, as forbidden, a decider its node's approvers leave out: by id, or by a role it does not name exactly", () => {
    const book = new PauseBook('R1');
    const pause = book.add('gate', {
      approvalsRequired: 1,
      declineRequires: 1,
      approvers: { users: ['UA1'], roles: ['builder'] },
    });
    const refusalOf = (request: PauseActionRequest) => {
      try {
        book.validate(request);
        return null;
      } catch (err) {
        return { type: (err as { type?: string }).type, message: (err as Error).message };
      }
    };
    for (const [who, role] of [
      ['UA2', 'approver'],
      ['UA3', 'admin'],
      ['UA4', null],
      ['ops', undefined],
    ] as const) {
      const refusal = refusalOf({ ...approve(who, pause.pauseId), role });
      assert.equal(refusal?.type, 'PauseActionForbidden', `${who} (${role}) is refused`);
      assert.match(refusal.message, new RegExp(`^${who} is not among the approvers of node 'gate'`));
    }
    assert.equal(refusalOf({ ...approve('UA1'), role: 'viewer' }), null, 'a named user, whatever their role');
    assert.equal(refusalOf({ ...approve('UA5'), role: 'builder' }), null, 'a user of a named role');
    assert.equal(pause.decisions.length, 0, 'validating decides nothing');
  });

  it('drops a signalled decision from someone the approvers leave out, and records the username of one they name', () => {
    const book = new PauseBook('R1');
    const pause = book.add('gate', {
      approvalsRequired: 1,
      declineRequires: 1,
      approvers: { users: ['UA1'], roles: [] },
    });
    book.decideIfOpen({ ...approve('UA2', pause.pauseId), username: 'bob', role: 'admin' });
    assert.equal(pause.decision as unknown, null);
    assert.equal(pause.decisions.length, 0);
    book.decideIfOpen({ ...approve('UA1', pause.pauseId), username: 'ada', role: 'approver' });
    assert.equal(pause.decision?.userId, 'UA1');
    assert.deepEqual(
      pause.decisions.map((d) => [d.user_id, d.username, d.channel]),
      [['UA1', 'ada', 'api']],
    );
  });

  it('lets anyone decide a pause whose node names no approvers (a budget pause, a node without them)', () => {
    const book = new PauseBook('R1');
    const pause = book.add('gate');
    book.validate({ ...approve('anyone', pause.pauseId), role: null });
    assert.equal(pause.approvers, null);
  });
});

import { ApplicationFailure } from '@temporalio/workflow';
import { PAUSE_REFUSED, type PauseActionRequest, PauseRefusal, pauseRecordId } from '../shared/pauses';

export interface OpenPause {
  pauseId: string;
  nodeId: string;
  decision: PauseActionRequest | null;
  /** Set once the action's effects are recorded: the update handler answers then. */
  applied: boolean;
}

/** The run's open pauses, in the order they happened; only handlers and the scheduler touch it. */
export class PauseBook {
  private readonly open: OpenPause[] = [];
  private readonly perNode = new Map<string, number>();

  constructor(private readonly runId: string) {}

  get openCount(): number {
    return this.open.length;
  }

  add(nodeId: string): OpenPause {
    const n = (this.perNode.get(nodeId) ?? 0) + 1;
    this.perNode.set(nodeId, n);
    const pause: OpenPause = { pauseId: pauseRecordId(this.runId, nodeId, n), nodeId, decision: null, applied: false };
    this.open.push(pause);
    return pause;
  }

  close(pause: OpenPause): void {
    const i = this.open.indexOf(pause);
    if (i >= 0) this.open.splice(i, 1);
  }

  /** The update validator: refuses, synchronously, an action that has nothing to act on. */
  validate(request: PauseActionRequest): void {
    if (this.open.length === 0) throw refusal(PauseRefusal.notPaused);
    if (!this.target(request)) throw refusal(PauseRefusal.noPausedTask);
  }

  /** Records the decision on its pause (the scheduler applies it); returns that pause. */
  decide(request: PauseActionRequest): OpenPause {
    const pause = this.target(request);
    if (!pause) throw refusal(PauseRefusal.noPausedTask);
    pause.decision = request;
    return pause;
  }

  /** Signals carry no answer: one that arrives for a settled pause is dropped. */
  decideIfOpen(request: PauseActionRequest): void {
    if (this.target(request)) this.decide(request);
  }

  private target(request: PauseActionRequest): OpenPause | undefined {
    const undecided = this.open.filter((p) => p.decision === null);
    return request.pauseId ? undecided.find((p) => p.pauseId === request.pauseId) : undecided[0];
  }
}

function refusal(message: string): ApplicationFailure {
  return ApplicationFailure.create({ type: PAUSE_REFUSED, message, nonRetryable: true });
}

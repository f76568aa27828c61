import { ApplicationFailure, condition } from '@temporalio/workflow';
import type { GraphNode, PauseResolution } from '../../src/engine/run-contract';
import {
  PAUSE_REFUSED,
  type PauseActionRequest,
  type PauseDecider,
  PauseRefusal,
  TIMEOUT_USER,
  pauseRecordId,
} from '../shared/pauses';

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
  /** Resolved pauses whose record the next save carries, oldest first. */
  private readonly unsaved: Array<{ pause: OpenPause; resolution: PauseResolution }> = [];
  /**
   * Who took the latest decision, named in refusals: a retried request whose first attempt's
   * decision already settled the pause learns so here, before the database has the record.
   */
  private lastDecider: PauseDecider | null = null;

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

  private close(pause: OpenPause): void {
    const i = this.open.indexOf(pause);
    if (i >= 0) this.open.splice(i, 1);
  }

  /** The pause is resolved; its record waits for the next save, which calls `saved` once written. */
  resolved(pause: OpenPause, resolution: PauseResolution): void {
    this.close(pause);
    this.unsaved.push({ pause, resolution });
  }

  get unsavedCount(): number {
    return this.unsaved.length;
  }

  /** The oldest resolution not yet saved, for a save to carry; `saved` marks its action applied. */
  takeUnsaved(): { resolution: PauseResolution; saved: () => void } | undefined {
    const next = this.unsaved.shift();
    return next && { resolution: next.resolution, saved: () => void (next.pause.applied = true) };
  }

  /** The update validator: refuses, synchronously, an action that has nothing to act on. */
  validate(request: PauseActionRequest): void {
    if (this.open.length === 0) throw this.refusal(PauseRefusal.notPaused);
    if (!this.target(request)) throw this.refusal(PauseRefusal.noPausedTask);
  }

  /** Records the decision on its pause (the scheduler applies it); returns that pause. */
  decide(request: PauseActionRequest): OpenPause {
    const pause = this.target(request);
    if (!pause) throw this.refusal(PauseRefusal.noPausedTask);
    pause.decision = request;
    this.lastDecider = { action: request.action, userId: request.userId };
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

  private refusal(message: string): ApplicationFailure {
    return ApplicationFailure.create({ type: PAUSE_REFUSED, message, nonRetryable: true, details: [this.lastDecider] });
  }
}

/**
 * Waits durably for a human (or the node's timeout, then its timeout action as `system:timeout`).
 * condition() without a timeout resolves to nothing: only the timed form answers false.
 */
export async function awaitDecision(
  node: GraphNode,
  pause: { decision: PauseActionRequest | null },
): Promise<PauseActionRequest> {
  const timeoutSeconds = Number(node.config.timeout_seconds ?? 0);
  if (Number.isFinite(timeoutSeconds) && timeoutSeconds > 0)
    await condition(() => pause.decision !== null, timeoutSeconds * 1000);
  else await condition(() => pause.decision !== null);
  if (pause.decision) return pause.decision;
  const action = node.config.timeout_action === 'APPROVE' ? 'APPROVE' : 'DECLINE';
  return { action, inputs: {}, userId: TIMEOUT_USER, comments: `No action within ${timeoutSeconds} s` };
}

/**
 * Resolves once the workflow has done everything the current activation made ready: conditions
 * are checked again only after the microtasks have run, so the first check says no and the next
 * one, after them, says yes. Deterministic: the same jobs settle the same way on replay.
 */
export function settled(): Promise<void> {
  let asked = false;
  return condition(() => {
    const ready = asked;
    asked = true;
    return ready;
  });
}

import { ApplicationFailure, condition } from '@temporalio/workflow';
import type { PauseResolution } from '../../src/engine/run-contract';
import { type Approvers, type PauseDecision, mayDecide, tally } from '../../src/engine/approvals';
import {
  PAUSE_FORBIDDEN,
  PAUSE_REFUSED,
  type PauseActionRequest,
  type PauseDecider,
  PauseRefusal,
  type PauseRefusalDetails,
  notAnApprover,
  pauseRecordId,
} from '../../src/contracts/pauses';

export interface OpenPause {
  pauseId: string;
  nodeId: string;
  decision: PauseActionRequest | null;
  /** Set once the action's effects are recorded: the update handler answers then. */
  applied: boolean;
  /** Every decision so far (several when the node asks for a quorum), oldest first. */
  decisions: PauseDecision[];
  /** How many approvals resume the run, how many declines decline it (1 and 1 unless the node says). */
  quorum: Quorum;
  /** Who may decide it (the node's `approvers`), or null: anyone who may decide pauses. */
  approvers: Approvers | null;
}

export interface Quorum {
  approvalsRequired: number;
  declineRequires: number;
}

/** What a pause's node says about deciding it: the quorum and, when it names them, the approvers. */
export interface PauseRules extends Quorum {
  approvers?: Approvers | null;
}

const SINGLE: PauseRules = { approvalsRequired: 1, declineRequires: 1 };

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

  /** Every pause id this run has opened, so that a signal for one still ahead is told from a stale one. */
  private readonly opened = new Set<string>();

  /**
   * Signalled decisions for pauses this workflow has not reached yet, applied when they open. The
   * api signals the pause its record names; that record is written by the workflow task that opens
   * the pause, and when that task times out (a starved or lost worker) the record stays while the
   * task is run again from the start, with the signal delivered before the graph reaches the pause.
   */
  private readonly ahead = new Map<string, PauseActionRequest[]>();

  constructor(private readonly runId: string) {}

  get openCount(): number {
    return this.open.length;
  }

  add(nodeId: string, rules: PauseRules = SINGLE): OpenPause {
    const n = (this.perNode.get(nodeId) ?? 0) + 1;
    this.perNode.set(nodeId, n);
    const pause: OpenPause = {
      pauseId: pauseRecordId(this.runId, nodeId, n),
      nodeId,
      decision: null,
      applied: false,
      decisions: [],
      quorum: { approvalsRequired: rules.approvalsRequired, declineRequires: rules.declineRequires },
      approvers: rules.approvers ?? null,
    };
    this.open.push(pause);
    this.opened.add(pause.pauseId);
    for (const request of this.ahead.get(pause.pauseId) ?? []) this.decideIfOpen(request);
    this.ahead.delete(pause.pauseId);
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
    if (this.open.length === 0) throw this.refusal(PauseRefusal.notPaused, request);
    const pause = this.target(request);
    if (!pause) throw this.refusal(PauseRefusal.noPausedTask, request);
    if (!mayDecide(pause.approvers, request))
      throw ApplicationFailure.create({
        type: PAUSE_FORBIDDEN,
        message: notAnApprover(request.userId, pause.nodeId),
        nonRetryable: true,
      });
    if (pause.decisions.some((d) => d.user_id === request.userId))
      throw this.refusal(PauseRefusal.alreadyDecided, request);
  }

  /**
   * Records the decision on its pause; `decided` once it settles the pause (the first decision, or
   * the one that completes a quorum), which the scheduler then applies. Returns that pause.
   */
  decide(request: PauseActionRequest): { pause: OpenPause; decided: boolean } {
    const pause = this.target(request);
    if (!pause) throw this.refusal(PauseRefusal.noPausedTask, request);
    pause.decisions.push(decisionOf(request));
    this.lastDecider = { action: request.action, userId: request.userId };
    if (tally(pause.decisions, pause.quorum) !== null) pause.decision = request;
    return { pause, decided: pause.decision !== null };
  }

  /**
   * Signals carry no answer: one that arrives for a settled pause, from someone who decided
   * already or from someone its `approvers` leave out, is dropped; one for a pause not reached
   * yet waits for it.
   */
  decideIfOpen(request: PauseActionRequest): void {
    if (request.pauseId && !this.opened.has(request.pauseId)) {
      this.ahead.set(request.pauseId, [...(this.ahead.get(request.pauseId) ?? []), request]);
      return;
    }
    const pause = this.target(request);
    if (!pause || !mayDecide(pause.approvers, request)) return;
    if (!pause.decisions.some((d) => d.user_id === request.userId)) this.decide(request);
  }

  /**
   * Details: the latest decider, and whether the pause the request names is one this workflow has
   * not reached yet (its record written by a workflow task that is being run again): the api then
   * sends the action again rather than refuse it.
   */
  private refusal(message: string, request: PauseActionRequest): ApplicationFailure {
    const ahead = request.pauseId !== undefined && !this.opened.has(request.pauseId);
    const details: PauseRefusalDetails = [this.lastDecider, ahead];
    return ApplicationFailure.create({ type: PAUSE_REFUSED, message, nonRetryable: true, details });
  }

  private target(request: PauseActionRequest): OpenPause | undefined {
    const undecided = this.open.filter((p) => p.decision === null);
    return request.pauseId ? undecided.find((p) => p.pauseId === request.pauseId) : undecided[0];
  }
}

/** A decision as the pause's history shows it, timed by the workflow's clock. */
export function decisionOf(request: PauseActionRequest): PauseDecision {
  return {
    user_id: request.userId,
    username: request.username ?? null,
    action: request.action,
    channel: request.channel ?? 'api',
    time: new Date().toISOString(),
    comments: request.comments,
  };
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

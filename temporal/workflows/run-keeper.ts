import {
  CancellationScope,
  condition,
  proxyLocalActivities,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { ProjectionActivities } from '../activities';
import { nodeFailureMessage } from '../../src/engine/graph-walker';
import type { NodeState } from '../../src/engine/node-inputs';
import type { GraphNode, NodeOutput, ProgressSave, TaskWrite } from '../../src/engine/run-contract';
import type { RunResume, SpurRunInput } from '../../src/contracts/run-contract';
import { SpurRunStatus } from '../../src/contracts/search-attributes';
import type { RunStatus } from '../../src/engine/statuses';
import { PROJECTION_OPTIONS } from './activity-options';
import { type OpenPause, PauseBook, type Quorum, settled } from './pause-book';
import { awaitApproval } from './approval-wait';
import { type ApprovalDeliveryOutcome, approvalPlan } from '../../src/engine/approvals';
import type { PauseActionRequest } from '../../src/contracts/pauses';
import { TaskBook } from '../../src/engine/task-book';
import { announce } from './callbacks';
import type { RunTrace } from '../../src/contracts/trace-ids';

const projection = proxyLocalActivities<ProjectionActivities>(PROJECTION_OPTIONS);

type Final = {
  status: RunStatus;
  message: string | null;
  outputsByTitle: Record<string, NodeOutput> | null;
  outputsById?: Record<string, NodeOutput>;
};

/**
 * The run as its record should show it, and the single writer of that record: tasks are kept in
 * memory (TaskBook) and saved, with the run's status, one save after another. Pure nodes only
 * change memory; a save happens before a slow node starts, at a pause, and at the end.
 */
export class RunKeeper {
  readonly pauses: PauseBook;
  readonly tasks: TaskBook;
  firstFailure: string | null = null;
  declined: string | null = null;
  private readonly runId: string;
  private readonly workflowIdPrefix: string;
  private readonly callback: SpurRunInput['callback'];
  /** Exported as the run's span by the save that records its end. */
  private readonly traced: { workflowId: string; trace: RunTrace } | undefined;
  private shown: RunStatus = 'PENDING';
  private writes: Promise<void> = Promise.resolve();
  /**
   * The first save that failed for good (ProjectionRejected: its record already says FAILED).
   * Later saves still run: one failed save must not leave the chain rejected for every save after it.
   */
  saveFailure: unknown = null;

  private readonly historyEventsLimit: number | undefined;
  /** Latched once the run has decided to continue as new: no node starts after that. */
  continuing = false;

  constructor(input: SpurRunInput, topLevel: GraphNode[]) {
    this.runId = input.runId;
    this.workflowIdPrefix = input.workflowIdPrefix ?? '';
    this.callback = input.callback;
    this.traced = input.trace ? { workflowId: input.workflowId, trace: input.trace } : undefined;
    this.pauses = new PauseBook(input.runId);
    this.historyEventsLimit = input.historyEventsLimit;
    const resume = input.resume;
    this.tasks = new TaskBook(topLevel, input.taskIds, resume?.tasks);
    if (resume) {
      this.tasks.saved = resume.tasksSaved;
      this.firstFailure = resume.firstFailure;
      this.declined = resume.declined;
      this.shown = resume.shown;
    }
  }

  /**
   * Whether a top-level node may start, or the run should drain and continue as new: its history
   * is over the configured size or Temporal suggests it. Never while a human pause is open.
   */
  mayStart(): boolean {
    if (this.continuing) return false;
    if (this.pauses.openCount > 0) return true;
    const info = workflowInfo();
    const large =
      info.continueAsNewSuggested ||
      (this.historyEventsLimit !== undefined && info.historyLength >= this.historyEventsLimit);
    if (!large) return true;
    this.continuing = true;
    return false;
  }

  /** What the next execution needs: the ended nodes, the tasks, what the record shows. */
  resumeState(states: Map<string, NodeState>): RunResume {
    return {
      states: [...states.entries()],
      tasks: this.tasks.snapshot(),
      tasksSaved: this.tasks.saved,
      firstFailure: this.firstFailure,
      declined: this.declined,
      shown: this.shown,
    };
  }

  private slowInFlight = 0;

  /**
   * Kept in memory; saved at once while the run is waiting on something slow (a human, an LLM
   * call), so progress elsewhere shows. A chain of pure nodes is saved once, at the end.
   */
  recordTask(write: TaskWrite): void {
    this.tasks.apply(write);
    if (this.pauses.openCount > 0 || this.slowInFlight > 0) void this.save().catch(() => undefined);
  }

  slowNodeDone(): void {
    this.slowInFlight--;
  }

  /** A node waits for a slot of a fleet-wide limit on its model: its task says which (task.waiting). */
  slotWaiting(nodeId: string, key: string): void {
    this.recordTask({ nodeId, status: 'RUNNING', waitingFor: key });
  }

  /** The slot came: the task stops waiting and adds how long it waited. */
  slotGranted(nodeId: string, waitedMs: number): void {
    this.recordTask({ nodeId, status: 'RUNNING', waitingFor: null, addWaitedMs: waitedMs });
  }

  /** The run shows FAILED as soon as a node failed (other branches go on): save now. */
  nodeFailed(node: GraphNode, error: string): void {
    if (this.firstFailure !== null) return;
    this.firstFailure = nodeFailureMessage(node, error);
    void this.save().catch(() => undefined);
  }

  /** A slow node is about to start: show it RUNNING (and everything before it) first. */
  async beforeSlowNode(node: GraphNode, input: Record<string, unknown>): Promise<void> {
    this.tasks.apply({ nodeId: node.id, status: 'RUNNING', inputs: input, startTime: new Date().toISOString() });
    this.slowInFlight++;
    await this.save();
  }

  /** PAUSED while a pause is open, FAILED once a node failed, RUNNING otherwise. */
  private liveStatus(): RunStatus {
    return this.pauses.openCount > 0 ? 'PAUSED' : this.firstFailure !== null ? 'FAILED' : 'RUNNING';
  }

  /**
   * Saves what changed (tasks, live status), after the saves before it. `via` carries the save
   * together with another write (a pause record) in one local activity; it always runs. A save
   * without `via` carries the oldest resolved pause not yet saved; one with
   * `via` or a final status lets them go first, a save each, so records are written in order.
   */
  save(final?: Final, via?: (progress: ProgressSave) => Promise<void>): Promise<void> {
    if (via || final) for (let n = this.pauses.unsavedCount; n > 0; n--) void this.save().catch(() => undefined);
    const write = this.writes.then(() => {
      const status = final?.status ?? this.liveStatus();
      const runChanged = status !== this.shown || final !== undefined;
      const resolved = via ? undefined : this.pauses.takeUnsaved();
      if (!this.tasks.dirty && !runChanged && !via && !resolved) return undefined;
      const first = !this.tasks.saved;
      const tasks = this.tasks.dirty ? { records: this.tasks.take(), first } : undefined;
      if (tasks) this.tasks.saved = true;
      if (runChanged) this.show(status);
      const message = final ? final.message : this.firstFailure;
      const run = runChanged
        ? {
            status,
            message,
            ...(final
              ? {
                  final: {
                    outputsByTitle: final.outputsByTitle,
                    ...(final.outputsById ? { outputsById: final.outputsById } : {}),
                  },
                }
              : {}),
          }
        : undefined;
      const progress: ProgressSave = { runId: this.runId, ...(tasks ? { tasks } : {}), ...(run ? { run } : {}) };
      if (resolved) {
        // The human's decision is applied only once its record is written, whatever cancels the run meanwhile.
        return CancellationScope.nonCancellable(() =>
          projection.resolvePause({ resolution: resolved.resolution, progress }),
        ).then(resolved.saved);
      }
      if (via) return via(progress);
      return projection.saveProgress(final && this.traced ? { ...progress, ended: this.traced } : progress);
    });
    this.writes = write.catch((err: unknown) => {
      this.saveFailure ??= err;
    });
    return write;
  }

  /**
   * A decision that did not settle its pause (a quorum still open) is recorded in its history, after
   * the writes before it; the action is answered once it is.
   */
  recordDecisions(pause: OpenPause): Promise<void> {
    const decisions = [...pause.decisions];
    return this.afterWrites(() =>
      projection.recordPauseDecisions({ runId: this.runId, pauseId: pause.pauseId, decisions }),
    );
  }

  /** A delivery of approval links ended: its event, in order with the run's other writes (one writer of the stream). */
  recordDelivery(delivery: ApprovalDeliveryOutcome): Promise<void> {
    return this.afterWrites(() => projection.recordNotification({ runId: this.runId, delivery }), false);
  }

  /** `critical`: a failure fails the run (its record could not be saved); an event's does not. */
  private afterWrites(work: () => Promise<void>, critical = true): Promise<void> {
    const write = this.writes.then(work);
    this.writes = write.catch((err: unknown) => {
      if (critical) this.saveFailure ??= err;
    });
    return write;
  }

  /**
   * A save failed for good: its write recorded the run FAILED, so the run's status search attribute
   * says FAILED too (a final save upserts its own status before it is written).
   */
  showSaveFailed(): void {
    if (this.shown !== 'FAILED') this.show('FAILED');
  }

  /** The status the run is listed under in Temporal (its search attribute), as its record shows it. */
  private show(status: RunStatus): void {
    this.shown = status;
    upsertSearchAttributes([{ key: SpurRunStatus, value: status }]);
  }

  /** Saves until no resolved pause waits for its record (before the run continues as new). */
  async saveAll(): Promise<void> {
    do await this.save();
    while (this.pauses.unsavedCount > 0);
  }

  finish(final: Final): Promise<void> {
    return this.save(final);
  }

  /** Cancel: open tasks CANCELED, the run CANCELED — saved even though the run is being cancelled. */
  cancel(message: string): Promise<void> {
    this.tasks.cancelOpen(new Date().toISOString());
    return CancellationScope.nonCancellable(() => this.save({ status: 'CANCELED', message, outputsByTitle: null }));
  }

  /**
   * A HumanInterventionNode: record the pause, wait durably for a human (or the node's timeout),
   * apply the action. APPROVE keeps the original data and adds the human's keys; OVERRIDE lets
   * the human's keys win; DECLINE cancels the node's dependents and, at the end, the run.
   */
  async pauseAt(node: GraphNode, input: Record<string, unknown>): Promise<NodeState> {
    const message = typeof node.config.message === 'string' ? node.config.message : 'Human intervention required';
    const plan = approvalPlan(node.config);
    const pauseTime = new Date().toISOString();
    const pause = await this.openPause(
      node,
      input,
      message,
      { status: 'PAUSED', inputs: input, outputs: input, startTime: pauseTime, endTime: pauseTime },
      plan,
    );
    const outcome = await awaitApproval({ runId: this.runId, workflowIdPrefix: this.workflowIdPrefix }, pause, plan);
    const resumeTime = new Date().toISOString();
    if (outcome.kind === 'failed') {
      // on_timeout: fail — the node fails (and with it the run), its pause resolved by the timeout.
      this.tasks.apply({ nodeId: node.id, status: 'FAILED', outputs: null, error: outcome.error, endTime: resumeTime });
      this.nodeFailed(node, outcome.error);
      this.resolvePause(pause, pause.decision as PauseActionRequest, resumeTime);
      return { status: 'FAILED', error: outcome.error };
    }
    const decision = outcome.decision;
    const declined = decision.action === 'DECLINE';
    const output: NodeOutput | null = declined
      ? null
      : decision.action === 'APPROVE'
        ? { ...decision.inputs, ...input }
        : { ...input, ...decision.inputs };
    this.tasks.apply({
      nodeId: node.id,
      status: declined ? 'CANCELED' : 'COMPLETED',
      outputs: output,
      error: declined ? `Declined by ${decision.userId}` : null,
      endTime: resumeTime,
    });
    if (declined) this.declined ??= `Declined by ${decision.userId} at node '${node.title}' (${node.id})`;
    this.resolvePause(pause, decision, resumeTime);
    return declined ? { status: 'CANCELED', upstreamFailure: false } : { status: 'COMPLETED', output };
  }

  /**
   * A model call would pass the workflow's budget: the node's task shows PAUSED with the budget's
   * message (listed with the paused runs) until a person decides; no timeout. The caller runs the
   * node again (APPROVE, OVERRIDE) or fails it (DECLINE).
   */
  async pauseForBudget(node: GraphNode, input: Record<string, unknown>, message: string): Promise<PauseActionRequest> {
    const pause = await this.openPause(node, input, message, { status: 'PAUSED' });
    await condition(() => pause.decision !== null);
    const decision = pause.decision as PauseActionRequest;
    const resumeTime = new Date().toISOString();
    // Running again (or failing, which the walker records as the node's end).
    this.tasks.apply({ nodeId: node.id, status: 'RUNNING' });
    this.resolvePause(pause, decision, resumeTime);
    return decision;
  }

  /** Records the pause (the task's change rides on the same save) and says so to the run's callback. */
  private async openPause(
    node: GraphNode,
    input: Record<string, unknown>,
    message: string,
    task: Omit<TaskWrite, 'nodeId'>,
    quorum?: Quorum,
  ): Promise<OpenPause> {
    const pause = this.pauses.add(node.id, quorum);
    const pauseTime = new Date().toISOString();
    // The pause's task change stays in memory: the save that records the pause carries it (one write).
    this.tasks.apply({ nodeId: node.id, ...task });
    await this.save(undefined, (progress) =>
      projection.recordPause({
        pause: { runId: this.runId, nodeId: node.id, pauseId: pause.pauseId, message, pauseTime, input },
        progress,
      }),
    );
    await announce(this.runId, this.callback, 'run.paused', pause.pauseId.slice(this.runId.length + 1));
    return pause;
  }

  /**
   * The nodes after the pause start first: the save that shows the next one RUNNING carries the
   * resolution; if none starts now, a save of its own does, once the workflow has settled. The
   * action is answered once that save is written.
   */
  private resolvePause(pause: OpenPause, decision: PauseActionRequest, resumeTime: string): void {
    this.pauses.resolved(pause, {
      pauseId: pause.pauseId,
      action: decision.action,
      userId: decision.userId,
      comments: decision.comments,
      resumeTime,
      decisions: pause.decisions,
    });
    void CancellationScope.nonCancellable(async () => {
      await settled();
      await this.save();
    }).catch(() => undefined);
  }
}

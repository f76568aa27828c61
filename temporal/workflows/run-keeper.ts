import {
  CancellationScope,
  log,
  proxyLocalActivities,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { ProjectionActivities } from '../activities';
import { nodeFailureMessage } from '../../src/engine/graph-walker';
import type { NodeState } from '../../src/engine/node-inputs';
import type {
  GraphNode,
  KnownRecord,
  NodeOutput,
  PauseRecord,
  ProgressSave,
  SavedAs,
  TaskWrite,
  WaitReason,
} from '../../src/engine/run-contract';
import type { RunEndPlan, RunResume, SpurRunInput } from '../../src/contracts/run-contract';
import { SpurRunStatus } from '../../src/contracts/search-attributes';
import type { RunStatus } from '../../src/engine/statuses';
import { PROJECTION_OPTIONS } from './activity-options';
import { type OpenPause, PauseBook } from './pause-book';
import type { ApprovalDeliveryOutcome } from '../../src/engine/approvals';
import { TaskBook } from '../../src/engine/task-book';
import type { RunTrace } from '../../src/contracts/trace-ids';
import { FailureType, applicationCause } from '../../src/contracts/failures';
import { finalContentDigest, finalRunPatch } from '../../src/engine/carried-end';

const projection = proxyLocalActivities<ProjectionActivities>(PROJECTION_OPTIONS);

/**
 * Where a node's call carries the save that shows it RUNNING (RunKeeper.carry): its local activity
 * (a short call), or its regular activity, whose input the history keeps (REGULAR_CARRY_MAX_CHARS).
 */
export type CarryKind = 'local' | 'regular';

/**
 * The most of a run's tasks (as JSON) a regular activity carries, twice (its save, the run's end):
 * a run's inputs and outputs over 16 KB each are stored by reference, so a small run rides along
 * whole and the history of a large one does not grow by copies of its tasks.
 */
export const REGULAR_CARRY_MAX_CHARS = 16 * 1024;

type Final = {
  status: RunStatus;
  message: string | null;
  outputsByTitle: Record<string, NodeOutput> | null;
  outputsById?: Record<string, NodeOutput>;
};

/**
 * The run as its record should show it, and the single writer of that record: tasks are kept in
 * memory (TaskBook) and saved, with the run's status, one save after another. Pure nodes only
 * change memory; a save happens before a slow node starts, at a pause, and at the end. Pauses
 * open and close at the PauseDesk, which asks the keeper for every write.
 */
export class RunKeeper {
  /** Read by every save: an open pause shows the run PAUSED, a resolved one rides on the next save. */
  readonly pauses: PauseBook;
  readonly tasks: TaskBook;
  firstFailure: string | null = null;
  /** Set by the first DECLINE: the run ends CANCELED with this message. */
  declined: string | null = null;
  private readonly runId: string;
  /** Exported as the run's span by the save that records its end. */
  private readonly traced: { workflowId: string; trace: RunTrace } | undefined;
  private shown: RunStatus = 'PENDING';
  /** The status search attribute its start gave the run (input.listedAs), until the first show(). */
  private listedByStart: RunStatus | null;
  private writes: Promise<void> = Promise.resolve();
  private readonly workflowId: string;
  private readonly recordedAs: SpurRunInput['recordedAs'];
  /**
   * The run's head as this workflow's last save left it (null: never saved), so the next save need
   * not read it; undefined once unknown (a continued run, a write of another kind) or after the
   * final save was sent: every save from then on reads the run first.
   */
  private head: string | null | undefined;
  /** The version of the run's tasks document the last save wrote (null: unknown, or none yet). */
  private tasksVersion: number | null = null;
  /**
   * The first save that failed for good (ProjectionRejected: its record already says FAILED).
   * Later saves still run: one failed save must not leave the chain rejected for every save after it.
   */
  saveFailure: unknown = null;
  /**
   * Latched by the first save refused for good in a run that can stop (`whenStopped`): the record
   * already says FAILED and every later save would be refused too (tasks only grow), so nothing more
   * is saved and `onStopped` stops the graph: no node starts, and the calls in flight are cancelled
   * rather than paid for a run that has failed.
   */
  stopped = false;
  private onStopped: (() => void) | undefined;

  private readonly historyEventsLimit: number | undefined;
  /** Latched once the run has decided to continue as new: no node starts after that. */
  continuing = false;

  /**
   * `carries`: whether a node's call carries the save that shows it RUNNING, and in what activity
   * (never for a run started before calls could: its history has that save as a local activity of
   * its own).
   */
  constructor(
    input: SpurRunInput,
    topLevel: GraphNode[],
    private readonly carries: (node: GraphNode) => CarryKind | undefined = () => undefined,
  ) {
    this.runId = input.runId;
    // A chat run records its turn before its end, a dry run's stubs stay the workflow's: they end as before.
    this.endsCarried = input.endsCarried === true && !input.chat && !input.dryRun;
    this.topLevel = topLevel.map(({ id, title }) => ({ id, title }));
    this.workflowId = input.workflowId;
    this.recordedAs = input.recordedAs;
    this.head = input.resume ? undefined : null;
    this.listedByStart = input.resume ? null : (input.listedAs ?? null);
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
    if (this.continuing || this.stopped) return false;
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
  /** The node whose call is to carry the save that shows it RUNNING (beforeSlowNode, carry). */
  private carried: string | null = null;
  /** Latched once the run's tasks were too large to ride on a regular activity's input (fitsHistory). */
  private tooLargeToCarry = false;
  /** Whether a carried call may write the run's final save (SpurRunInput.endsCarried). */
  private readonly endsCarried: boolean;
  private readonly topLevel: Array<Pick<GraphNode, 'id' | 'title'>>;
  /** The digest of the final save a carried call wrote (carriedEndContent), until the run's own final save. */
  private endedByCall: string | null = null;
  /** Saves sent and not yet settled (a region's end must not overtake one). */
  private pendingWrites = 0;

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

  /** A node waits for a slot of a fleet-wide limit on its model, or for its breaker: its task says which, and why (task.waiting). */
  slotWaiting(nodeId: string, key: string, reason: WaitReason): void {
    this.recordTask({ nodeId, status: 'RUNNING', waitingFor: key, waitingReason: reason });
  }

  /** The slot came: the task stops waiting and adds how long it waited. */
  slotGranted(nodeId: string, waitedMs: number): void {
    this.recordTask({ nodeId, status: 'RUNNING', waitingFor: null, waitingReason: null, addWaitedMs: waitedMs });
  }

  /** A SubworkflowNode waits for its child run (null: no longer): its task names the child. */
  childWaiting(nodeId: string, childRunId: string | null): void {
    this.recordTask({
      nodeId,
      status: 'RUNNING',
      waitingFor: childRunId,
      waitingReason: childRunId ? 'subworkflow' : null,
    });
  }

  /** The run shows FAILED as soon as a node failed (other branches go on): save now. */
  nodeFailed(node: GraphNode, error: string): void {
    if (this.firstFailure !== null) return;
    this.firstFailure = nodeFailureMessage(node, error);
    void this.save().catch(() => undefined);
  }

  /**
   * A slow node is about to start: show it RUNNING (and everything before it) first. A node
   * `carries` names has that save carried by its own call instead (`carry`).
   */
  async beforeSlowNode(node: GraphNode, input: Record<string, unknown>): Promise<void> {
    this.tasks.apply({ nodeId: node.id, status: 'RUNNING', inputs: input, startTime: new Date().toISOString() });
    this.slowInFlight++;
    const kind = this.carries(node);
    if (kind === 'local' || (kind === 'regular' && this.fitsHistory())) {
      this.carried = node.id;
      return;
    }
    await this.save();
  }

  /**
   * Whether the run's tasks are small enough to ride on a regular activity's input, which the
   * history keeps (the save and the end plan each hold them): larger, the run saves them itself.
   */
  private fitsHistory(): boolean {
    // Tasks grow as a run goes on: once too large, the run saves them itself from then on, unmeasured.
    if (this.tooLargeToCarry) return false;
    this.tooLargeToCarry = JSON.stringify(this.tasks.snapshot()).length > REGULAR_CARRY_MAX_CHARS;
    return !this.tooLargeToCarry;
  }

  /**
   * Runs a node's call, which writes the save that shows it RUNNING before it calls out, when
   * beforeSlowNode left that save to it: one local activity instead of two. In turn with the
   * other saves, like any: the run's carried nodes are those no other node runs beside
   * (`carries`), so no save waits long behind the call. A call that fails loses what its save
   * left, and the next save reads the run first; a save refused for good fails the run as any does.
   */
  async carry<T extends { saved?: SavedAs; ended?: string }>(
    nodeId: string,
    call: (save: ProgressSave | undefined, end: RunEndPlan | undefined) => Promise<T>,
    followUpIds: readonly string[] = [],
  ): Promise<T> {
    if (this.carried !== nodeId) return call(undefined, undefined);
    this.carried = null;
    let outcome = { err: new Error('the carried call did not run') } as { value: T } | { err: unknown };
    await this.save(undefined, async (progress) => {
      // Nothing to write (a save came between): the call goes alone, and the head stays as it was.
      const save = progress.tasks || progress.run ? progress : undefined;
      const unchanged = this.head === undefined ? null : { head: this.head, tasks: this.tasksVersion };
      try {
        const value = await call(save, this.endPlan([nodeId, ...followUpIds], progress.known));
        if (value.ended) this.endedBy(value.ended);
        outcome = { value };
        return save ? (value.saved ?? null) : unchanged;
      } catch (err) {
        // Only a save refused for good is the chain's failure (the run's); the call's is the node's.
        if (applicationCause(err)?.type === FailureType.ProjectionRejected) throw err;
        outcome = { err };
        return save ? null : unchanged;
      }
    });
    if ('err' in outcome) throw outcome.err;
    return outcome.value;
  }

  /**
   * What the run's last step (a carried call with its follow-up, a pure region) needs to write the
   * run's final save, when the run may end with it: nothing failed, declined or paused, and every
   * task but the step's own `nodeIds` ended. The step writes it only if the run does end with it;
   * finish() then checks it wrote what the run's own final save would.
   */
  private endPlan(nodeIds: readonly string[], known: KnownRecord | undefined): RunEndPlan | undefined {
    if (!this.endsCarried || this.firstFailure !== null || this.declined !== null) return undefined;
    if (this.pauses.openCount > 0 || this.continuing || this.stopped) return undefined;
    const tasks = this.tasks.snapshot();
    const step = new Set(nodeIds);
    if (tasks.some((t) => !step.has(t.node_id) && t.status !== 'COMPLETED' && t.status !== 'CANCELED'))
      return undefined;
    return {
      tasks,
      nodes: this.topLevel,
      ...(known ? { known } : {}),
      ...(this.traced ? { ended: this.traced } : {}),
    };
  }

  /**
   * What a pure region of `nodeIds` needs to end the run, when it is all the run has left: every
   * other task ended, none failed, and no save of the run still on its way (the region's would
   * overtake it).
   */
  regionEnd(nodeIds: readonly string[]): RunEndPlan | undefined {
    if (this.pendingWrites > 0) return undefined;
    return this.endPlan(nodeIds, this.known());
  }

  /** The run's last step wrote its final save (carry, regionEnd): the digest finish() checks its own against. */
  endedBy(digest: string): void {
    this.endedByCall = digest;
  }

  /** What stops the run's graph once a save is refused for good (`stopped`); without it a refusal stops nothing. */
  whenStopped(stop: () => void): void {
    this.onStopped = stop;
  }

  /** A write failed: the run's first failure is kept, and a refusal for good stops the run (`stopped`). */
  private writeFailed(err: unknown): void {
    this.saveFailure ??= err;
    if (this.stopped || !this.onStopped) return;
    if (applicationCause(err)?.type !== FailureType.ProjectionRejected) return;
    this.stopped = true;
    this.onStopped();
  }

  /** What the next save may write on without reading the run (undefined: it reads). */
  private known(): KnownRecord | undefined {
    if (this.head === undefined || !this.recordedAs) return undefined;
    return { head: this.head, tasks: this.tasksVersion, workflowId: this.workflowId, ...this.recordedAs };
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
  save(final?: Final, via?: (progress: ProgressSave) => Promise<SavedAs>): Promise<void> {
    if (via || final) for (let n = this.pauses.unsavedCount; n > 0; n--) void this.save().catch(() => undefined);
    const write = this.writes.then(() => {
      if (this.stopped) return undefined;
      const status = final?.status ?? this.liveStatus();
      const runChanged = status !== this.shown || final !== undefined;
      const resolved = via ? undefined : this.pauses.takeUnsaved();
      if (!this.tasks.dirty && !runChanged && !via && !resolved) return undefined;
      // The final save always holds them: an ended run's tasks are moved off its record (run-task-reads.ts).
      const tasks = this.tasks.dirty || (final && this.tasks.saved) ? { records: this.tasks.take() } : undefined;
      if (tasks) this.tasks.saved = true;
      if (runChanged) this.show(status);
      const message = final ? final.message : this.firstFailure;
      const run = final ? finalRunPatch({ ...final, message }) : runChanged ? { status, message } : undefined;
      const known = this.known();
      // Every save after the final one reads the run: whether the record ended, only a read tells.
      if (final) this.head = undefined;
      const progress: ProgressSave = {
        runId: this.runId,
        ...(tasks ? { tasks } : {}),
        ...(run ? { run } : {}),
        ...(known ? { known } : {}),
      };
      const learn = (saved: SavedAs) => {
        if (final) return;
        this.head = saved ? saved.head : undefined;
        this.tasksVersion = saved ? saved.tasks : null;
      };
      if (resolved) {
        // The human's decision is applied only once its record is written, whatever cancels the run meanwhile.
        return CancellationScope.nonCancellable(() =>
          projection.resolvePause({ resolution: resolved.resolution, progress }),
        ).then((head) => {
          learn(head);
          resolved.saved();
        });
      }
      if (via) return via(progress).then(learn);
      // The run's carried call wrote this very save already: nothing to send.
      if (final && tasks && run && this.endedByCall !== null) {
        const digest = finalContentDigest({ tasks: tasks.records, run });
        if (digest === this.endedByCall) return undefined;
        log.error('A carried call ended the run with another final save than its workflow', {
          runId: this.runId,
          carried: this.endedByCall,
          own: digest,
        });
      }
      return projection.saveProgress(final && this.traced ? { ...progress, ended: this.traced } : progress).then(learn);
    });
    this.writes = write.catch((err: unknown) => this.writeFailed(err));
    this.counted(write);
    return write;
  }

  /** Records a pause: its record and the run's changes so far (the node's PAUSED task) in one write. */
  savePause(pause: PauseRecord): Promise<void> {
    return this.save(undefined, (progress) => projection.recordPause({ pause, progress }));
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
    return this.afterWrites(() => {
      // Its event moves the run's head: the next save reads it.
      this.head = undefined;
      return projection.recordNotification({ runId: this.runId, delivery });
    }, false);
  }

  /** `critical`: a failure fails the run (its record could not be saved); an event's does not. */
  private afterWrites(work: () => Promise<void>, critical = true): Promise<void> {
    const write = this.writes.then(() => (this.stopped && critical ? undefined : work()));
    this.writes = write.catch((err: unknown) => {
      if (critical) this.writeFailed(err);
    });
    this.counted(write);
    return write;
  }

  /** Counted beside the chain, not in it: the next write waits no extra step (a history's commands keep their order). */
  private counted(write: Promise<unknown>): void {
    this.pendingWrites++;
    const settled = () => {
      this.pendingWrites--;
    };
    void write.then(settled, settled);
  }

  /**
   * A save failed for good: its write recorded the run FAILED, so the run's status search attribute
   * says FAILED too (a final save upserts its own status before it is written).
   */
  showSaveFailed(): void {
    if (this.shown !== 'FAILED') this.show('FAILED');
  }

  /**
   * The status the record shows, and the run is listed under in Temporal (its search attribute). The
   * first is not upserted when the run's start listed it so already (a run listed RUNNING from its start).
   */
  private show(status: RunStatus): void {
    this.shown = status;
    const listed = this.listedByStart === status;
    this.listedByStart = null;
    if (!listed) upsertSearchAttributes([{ key: SpurRunStatus, value: status }]);
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
}

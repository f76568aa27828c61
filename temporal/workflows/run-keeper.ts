import { CancellationScope, condition, proxyLocalActivities, upsertSearchAttributes } from '@temporalio/workflow';
import type { ProjectionActivities } from '../activities';
import type { NodeState } from '../shared/node-inputs';
import { type PauseActionRequest, TIMEOUT_USER } from '../shared/pauses';
import type { GraphNode, NodeOutput } from '../shared/run-contract';
import { SpurRunStatus } from '../shared/search-attributes';
import type { RunStatus } from '../shared/statuses';
import { PROJECTION_OPTIONS } from './activity-options';
import { PauseBook } from './pause-book';

const projection = proxyLocalActivities<ProjectionActivities>(PROJECTION_OPTIONS);

/**
 * What the run is doing, as the run record should show it: the single writer of the run
 * document (writes go one after another), the open pauses, the first failure, a decline.
 */
export class RunKeeper {
  readonly pauses: PauseBook;
  firstFailure: string | null = null;
  declined: string | null = null;
  private shown: RunStatus = 'RUNNING';
  private writes: Promise<void> = Promise.resolve();

  constructor(readonly runId: string) {
    this.pauses = new PauseBook(runId);
  }

  /** Queues a write of the run document after the ones before it. */
  write(fn: () => Promise<void>): Promise<void> {
    this.writes = this.writes.then(fn);
    return this.writes;
  }

  settled(): Promise<void> {
    return this.writes;
  }

  nodeFailed(node: GraphNode, error: string): void {
    if (this.firstFailure !== null) return;
    this.firstFailure = `Node '${node.title}' (${node.id}) failed: ${error.split('\n')[0]}`;
    void this.refreshStatus();
  }

  /** PAUSED while a pause is open, FAILED once a node failed, RUNNING otherwise. */
  refreshStatus(): Promise<void> {
    const status: RunStatus = this.pauses.openCount > 0 ? 'PAUSED' : this.firstFailure !== null ? 'FAILED' : 'RUNNING';
    if (status === this.shown) return this.writes;
    this.shown = status;
    upsertSearchAttributes([{ key: SpurRunStatus, value: status }]);
    const message = this.firstFailure;
    return this.write(() => projection.setRunStatus({ runId: this.runId, status, message }));
  }

  /**
   * A HumanInterventionNode: record the pause, wait durably for a human (or the node's timeout),
   * apply the action. APPROVE keeps the original data and adds the human's keys; OVERRIDE lets
   * the human's keys win; DECLINE cancels the node's dependents and, at the end, the run.
   */
  async pauseAt(node: GraphNode, input: Record<string, unknown>): Promise<NodeState> {
    const pause = this.pauses.add(node.id);
    const message = typeof node.config.message === 'string' ? node.config.message : 'Human intervention required';
    await projection.recordPause({ runId: this.runId, nodeId: node.id, pauseId: pause.pauseId, message, pauseTime: new Date().toISOString(), input });
    await this.refreshStatus();

    const timeoutSeconds = Number(node.config.timeout_seconds ?? 0);
    // condition() without a timeout resolves to nothing: only the timed form answers false.
    const hasTimeout = Number.isFinite(timeoutSeconds) && timeoutSeconds > 0;
    if (hasTimeout) await condition(() => pause.decision !== null, timeoutSeconds * 1000);
    else await condition(() => pause.decision !== null);
    const decision: PauseActionRequest = pause.decision
      ? pause.decision
      : { action: node.config.timeout_action === 'APPROVE' ? 'APPROVE' : 'DECLINE', inputs: {}, userId: TIMEOUT_USER, comments: `No action within ${timeoutSeconds} s` };

    const declined = decision.action === 'DECLINE';
    const output: NodeOutput | null = declined ? null : decision.action === 'APPROVE' ? { ...decision.inputs, ...input } : { ...input, ...decision.inputs };
    const error = declined ? `Declined by ${decision.userId}` : null;
    await CancellationScope.nonCancellable(() =>
      projection.resolvePause({
        runId: this.runId, nodeId: node.id, pauseId: pause.pauseId, action: decision.action, userId: decision.userId,
        comments: decision.comments, resumeTime: new Date().toISOString(), taskStatus: declined ? 'CANCELED' : 'COMPLETED', output, error,
      }),
    );
    if (declined) this.declined ??= `Declined by ${decision.userId} at node '${node.title}' (${node.id})`;
    this.pauses.close(pause);
    await this.refreshStatus();
    pause.applied = true;
    return declined ? { status: 'CANCELED', upstreamFailure: false } : { status: 'COMPLETED', output };
  }
}

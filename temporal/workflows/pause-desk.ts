import { CancellationScope, condition, setHandler } from '@temporalio/workflow';
import type { NodeState } from '../../src/engine/node-inputs';
import type { GraphNode, TaskWrite } from '../../src/engine/run-contract';
import type { SpurRunInput } from '../../src/contracts/run-contract';
import { approvalPlan } from '../../src/engine/approvals';
import { decidePausedNode } from '../../src/engine/pause-decisions';
import type { DryRunPauses } from '../../src/engine/dry-run';
import { type PauseActionRequest, pauseActionSignal, pauseActionUpdate } from '../../src/contracts/pauses';
import { approvalDeliverySignal } from '../../src/contracts/approval-contract';
import { type OpenPause, type PauseRules, settled } from './pause-book';
import { type RunIds, awaitApproval } from './approval-wait';
import { announce } from './callbacks';
import type { RunKeeper } from './run-keeper';

/**
 * The run's pauses from opening to decision: a HumanInterventionNode's (with its approval links)
 * and a budget's. Every record is the keeper's to write (its book of pauses rides on its saves);
 * the desk says what to write and when, and what the decision does to the node.
 */
export class PauseDesk {
  private readonly run: RunIds;
  private readonly callback: SpurRunInput['callback'];

  constructor(
    input: SpurRunInput,
    private readonly keeper: RunKeeper,
  ) {
    this.run = { runId: input.runId, workflowIdPrefix: input.workflowIdPrefix ?? '' };
    this.callback = input.callback;
  }

  /** Before the run's first await, so an early action is never dropped. */
  listen(): void {
    const book = this.keeper.pauses;
    setHandler(
      pauseActionUpdate,
      async (request) => {
        const { pause, decided } = book.decide(request);
        // A decision that settles the pause is answered once applied; one of a quorum once recorded.
        if (decided) await condition(() => pause.applied);
        else await this.keeper.recordDecisions(pause);
        return { pauseId: pause.pauseId, nodeId: pause.nodeId };
      },
      { validator: (request) => book.validate(request) },
    );
    setHandler(pauseActionSignal, (request) => book.decideIfOpen(request));
    setHandler(approvalDeliverySignal, (delivery) => this.keeper.recordDelivery(delivery).catch(() => undefined));
  }

  /**
   * A HumanInterventionNode: record the pause, wait durably for a human (or the node's timeout),
   * then apply what the decision does to the node (decidePausedNode); on_timeout: fail fails it.
   */
  /**
   * A dry run (an eval) asks no one: the pause is decided at once by its policy (`pauses`), nothing
   * is opened or delivered, and the task shows the decision as a person's would.
   */
  decideByPolicy(node: GraphNode, input: Record<string, unknown>, pauses: DryRunPauses): NodeState {
    const action = pauses === 'approve' ? 'APPROVE' : 'DECLINE';
    const decided = decidePausedNode(node, input, {
      action,
      userId: `the dry run's policy (pauses: ${pauses})`,
      inputs: {},
    });
    const now = new Date().toISOString();
    this.keeper.tasks.apply({ nodeId: node.id, inputs: input, startTime: now, ...decided.task, endTime: now });
    if (decided.runDeclined !== null) this.keeper.declined ??= decided.runDeclined;
    return decided.state;
  }

  async pauseAt(node: GraphNode, input: Record<string, unknown>): Promise<NodeState> {
    const message = typeof node.config.message === 'string' ? node.config.message : 'Human intervention required';
    const plan = approvalPlan(node.config);
    const pauseTime = new Date().toISOString();
    const pause = await this.open(
      node,
      input,
      message,
      { status: 'PAUSED', inputs: input, outputs: input, startTime: pauseTime, endTime: pauseTime },
      plan,
    );
    const outcome = await awaitApproval(this.run, pause, plan);
    const resumeTime = new Date().toISOString();
    const { tasks } = this.keeper;
    if (outcome.kind === 'failed') {
      // The node fails (and with it the run), its pause resolved by the timeout.
      tasks.apply({ nodeId: node.id, status: 'FAILED', outputs: null, error: outcome.error, endTime: resumeTime });
      this.keeper.nodeFailed(node, outcome.error);
      this.resolve(pause, pause.decision as PauseActionRequest, resumeTime);
      return { status: 'FAILED', error: outcome.error };
    }
    const decided = decidePausedNode(node, input, outcome.decision);
    tasks.apply({ nodeId: node.id, ...decided.task, endTime: resumeTime });
    if (decided.runDeclined !== null) this.keeper.declined ??= decided.runDeclined;
    this.resolve(pause, outcome.decision, resumeTime);
    return decided.state;
  }

  /**
   * A model call would pass the workflow's budget: the node's task shows PAUSED with the budget's
   * message (listed with the paused runs) until a person decides; no timeout. The caller runs the
   * node again (APPROVE, OVERRIDE) or fails it (DECLINE).
   */
  async pauseForBudget(node: GraphNode, input: Record<string, unknown>, message: string): Promise<PauseActionRequest> {
    const pause = await this.open(node, input, message, { status: 'PAUSED' });
    await condition(() => pause.decision !== null);
    const decision = pause.decision as PauseActionRequest;
    const resumeTime = new Date().toISOString();
    // Running again (or failing, which the walker records as the node's end).
    this.keeper.tasks.apply({ nodeId: node.id, status: 'RUNNING' });
    this.resolve(pause, decision, resumeTime);
    return decision;
  }

  /** Records the pause (the task's change rides on the same save) and says so to the run's callback. */
  private async open(
    node: GraphNode,
    input: Record<string, unknown>,
    message: string,
    task: Omit<TaskWrite, 'nodeId'>,
    rules?: PauseRules,
  ): Promise<OpenPause> {
    const { runId } = this.run;
    const pause = this.keeper.pauses.add(node.id, rules);
    const pauseTime = new Date().toISOString();
    // The pause's task change stays in memory: the save that records the pause carries it (one write).
    this.keeper.tasks.apply({ nodeId: node.id, ...task });
    await this.keeper.savePause({ runId, nodeId: node.id, pauseId: pause.pauseId, message, pauseTime, input });
    await announce(runId, this.callback, 'run.paused', pause.pauseId.slice(runId.length + 1));
    return pause;
  }

  /**
   * The nodes after the pause start first: the save that shows the next one RUNNING carries the
   * resolution; if none starts now, a save of its own does, once the workflow has settled. The
   * action is answered once that save is written.
   */
  private resolve(pause: OpenPause, decision: PauseActionRequest, resumeTime: string): void {
    this.keeper.pauses.resolved(pause, {
      pauseId: pause.pauseId,
      action: decision.action,
      userId: decision.userId,
      comments: decision.comments,
      resumeTime,
      decisions: pause.decisions,
    });
    void CancellationScope.nonCancellable(async () => {
      await settled();
      await this.keeper.save();
    }).catch(() => undefined);
  }
}

import { condition, isCancellation, proxyLocalActivities, setHandler, sleep } from '@temporalio/workflow';
import type { WaitActivities } from '../activities';
import { type InboundCallbackArrival, inboundCallbackSignal } from '../../src/contracts/inbound-callback-contract';
import { failureMessage } from '../../src/engine/graph-walker';
import type { NodeState } from '../../src/engine/node-inputs';
import { ENGINE_NODE_TYPES } from '../../src/engine/node-kinds';
import type { GraphNode, WaitReason } from '../../src/engine/run-contract';
import { type DryRun, type TaskDryRun, stubOfConfiguredOutput } from '../../src/engine/dry-run';
import { PROJECTION_OPTIONS } from './activity-options';
import type { RunKeeper } from './run-keeper';

/** Rendering `until` and claiming a timed-out callback are short database and template work. */
const waits = proxyLocalActivities<WaitActivities>({
  ...PROJECTION_OPTIONS,
  retry: { ...PROJECTION_OPTIONS.retry, nonRetryableErrorTypes: ['NodeExecutionError'] },
});

/** What a WaitForCallbackNode outputs when its timeout came and `on_timeout` is `continue`. */
export const TIMED_OUT_OUTPUT = { timed_out: true } as const;

/**
 * WaitNodes and WaitForCallbackNodes: each waits in the run's workflow (a durable timer, a
 * signal), so it holds no worker slot and outlives every process; the run shows RUNNING and the
 * task its wait (`waiting_reason`, `waiting_until`). A cancel of the run cancels the wait at once.
 */
export class WaitDesk {
  /** Calls that arrived, by node: kept even before the node's wait starts (its URL went out earlier). */
  private readonly arrived = new Map<string, Record<string, unknown>>();

  constructor(
    private readonly runId: string,
    private readonly keeper: RunKeeper,
    /** Set in a dry run (an eval): no callback will come, as nothing was sent to ask for one. */
    private readonly dryRun?: DryRun,
  ) {}

  /** Before the run's first await, so an early call is never dropped. */
  listen(): void {
    setHandler(inboundCallbackSignal, ({ nodeId, body }: InboundCallbackArrival) => {
      if (!this.arrived.has(nodeId)) this.arrived.set(nodeId, body);
    });
  }

  async waitAt(node: GraphNode, input: Record<string, unknown>): Promise<NodeState> {
    const startTime = new Date().toISOString();
    if (this.dryRun && node.node_type === ENGINE_NODE_TYPES.waitForCallback) {
      // Ends at once with a stub of the body its config describes, and says it did not wait.
      const state: NodeState = { status: 'COMPLETED', output: stubOfConfiguredOutput(node.config) };
      return this.end(node, state, input, startTime, { request: null });
    }
    try {
      return node.node_type === ENGINE_NODE_TYPES.waitForCallback
        ? await this.callback(node, input, startTime)
        : await this.timer(node, input, startTime);
    } catch (err) {
      // A cancel of the run goes on up (the keeper records it); a failed activity fails the node.
      if (isCancellation(err)) throw err;
      return this.end(node, { status: 'FAILED', error: failureMessage(err) }, input, startTime);
    }
  }

  private async timer(node: GraphNode, input: Record<string, unknown>, startTime: string): Promise<NodeState> {
    const until = typeof node.config.until === 'string' ? node.config.until.trim() : '';
    const seconds = typeof node.config.seconds === 'number' ? node.config.seconds : 0;
    const wakeAt = until
      ? (await waits.waitUntilOf({ node, input })).wakeAt
      : new Date(Date.now() + seconds * 1000).toISOString();
    await this.showWaiting(node, input, startTime, 'timer', wakeAt);
    const ms = Date.parse(wakeAt) - Date.now();
    if (ms > 0) await sleep(ms);
    return this.end(node, { status: 'COMPLETED', output: input }, input, startTime);
  }

  private async callback(node: GraphNode, input: Record<string, unknown>, startTime: string): Promise<NodeState> {
    const timeoutMs = (typeof node.config.timeout_seconds === 'number' ? node.config.timeout_seconds : 3600) * 1000;
    await this.showWaiting(node, input, startTime, 'callback', new Date(Date.now() + timeoutMs).toISOString());
    let body = (await condition(() => this.arrived.has(node.id), timeoutMs)) ? this.arrived.get(node.id) : undefined;
    if (!body) {
      // The timeout claims the callback, unless a call did first (its signal lost with its api).
      const ended = await waits.expireInboundCallback({ runId: this.runId, nodeId: node.id });
      if (ended.status === 'delivered') body = ended.body;
    }
    if (body) return this.end(node, { status: 'COMPLETED', output: body }, input, startTime);
    if (node.config.on_timeout === 'continue')
      return this.end(node, { status: 'COMPLETED', output: { ...TIMED_OUT_OUTPUT } }, input, startTime);
    const error = `No callback within ${timeoutMs / 1000} s (on_timeout: fail)`;
    return this.end(node, { status: 'FAILED', error }, input, startTime);
  }

  /** The task shows RUNNING, waiting, with its wake-up time or deadline: saved before the wait. */
  private showWaiting(
    node: GraphNode,
    input: Record<string, unknown>,
    startTime: string,
    reason: WaitReason,
    until: string,
  ): Promise<void> {
    this.keeper.tasks.apply({
      nodeId: node.id,
      status: 'RUNNING',
      inputs: input,
      startTime,
      waitingFor: reason,
      waitingReason: reason,
      waitingUntil: until,
    });
    return this.keeper.save();
  }

  /** The node's end: its task (no longer waiting), saved with the next save; a failure fails the run. */
  private end(
    node: GraphNode,
    state: NodeState,
    input: Record<string, unknown>,
    startTime: string,
    dryRun?: TaskDryRun,
  ): NodeState {
    const failed = state.status === 'FAILED';
    this.keeper.recordTask({
      ...(dryRun ? { dryRun } : {}),
      nodeId: node.id,
      status: state.status,
      inputs: input,
      outputs: state.status === 'COMPLETED' ? state.output : null,
      error: failed ? state.error : null,
      startTime,
      endTime: new Date().toISOString(),
      waitingFor: null,
      waitingReason: null,
      waitingUntil: null,
    });
    if (failed) this.keeper.nodeFailed(node, state.error);
    else void this.keeper.save().catch(() => undefined); // the wait's end shows at once, whatever runs next
    return state;
  }
}

import { type ActivityOptions, ActivityCancellationType, type LocalActivityOptions } from '@temporalio/workflow';
import { FINAL_NODE_FAILURES, FailureType } from '../../src/contracts/failures';
import { NODE_RETRY, nodeAttempts } from '../../src/engine/node-retries';
import type { CallbackRetryPolicy } from '../../src/contracts/callback-contract';

/** A pure node's time to run (one local activity, or its share of a region's). */
const PURE_NODE_SECONDS = 30;

/** Pure nodes: local activities, no server round trip; a failure there is a bug in input or code. */
export const PURE_NODE_OPTIONS: LocalActivityOptions = {
  startToCloseTimeout: `${PURE_NODE_SECONDS}s`,
  retry: { initialInterval: '200ms', maximumAttempts: 3, nonRetryableErrorTypes: FINAL_NODE_FAILURES },
};

/** A pure region (one local activity for several pure nodes): each node gets the time one would have alone. */
export function pureRegionOptions(nodeCount: number): LocalActivityOptions {
  return { ...PURE_NODE_OPTIONS, startToCloseTimeout: `${PURE_NODE_SECONDS * Math.max(1, nodeCount)}s` };
}

/**
 * Projection writes must land eventually: transient failures (MongoDB away) are retried with
 * backoff for as long as it is away. Permanent ones (a document too large, a validation or cast
 * error) arrive as ProjectionRejected (projection.activities.ts) and are never retried: retrying
 * them would hang the run. The Mongoose names stay listed for errors thrown before that check.
 */
export const PROJECTION_OPTIONS: LocalActivityOptions = {
  startToCloseTimeout: '30s',
  retry: {
    initialInterval: '200ms',
    backoffCoefficient: 2,
    maximumInterval: '10s',
    nonRetryableErrorTypes: [FailureType.ProjectionRejected, 'CastError', 'ValidationError', 'StrictModeError'],
  },
};

function positive(value: unknown, fallback: number, max: number): number {
  const n = typeof value === 'number' ? value : Number(value);
  return Number.isFinite(n) && n > 0 ? Math.min(n, max) : fallback;
}

/** How long one attempt of a node with I/O may take (`timeout_seconds`, default 300 s). */
export function ioNodeTimeoutSeconds(config: Record<string, unknown>): number {
  return positive(config.timeout_seconds, 300, 24 * 3600);
}

/**
 * Nodes with I/O or user code: timeouts and retries from the node's config (`timeout_seconds`,
 * `max_retries`, `heartbeat_timeout_seconds`), heartbeats so a dead worker is noticed in seconds, rate limits retried with
 * backoff (a provider's Retry-After arrives as the failure's next retry delay).
 */
export function ioNodeOptions(config: Record<string, unknown>): ActivityOptions {
  const timeoutSeconds = ioNodeTimeoutSeconds(config);
  // How soon a node on a worker that died is retried elsewhere; the activity heartbeats 3× as often.
  const heartbeatSeconds = Math.max(2, positive(config.heartbeat_timeout_seconds, 20, 600));
  return {
    startToCloseTimeout: `${timeoutSeconds + 30}s`,
    heartbeatTimeout: `${heartbeatSeconds}s`,
    retry: {
      initialInterval: NODE_RETRY.initialMs,
      backoffCoefficient: NODE_RETRY.coefficient,
      maximumInterval: NODE_RETRY.maximumMs,
      maximumAttempts: nodeAttempts(config),
      nonRetryableErrorTypes: FINAL_NODE_FAILURES,
    },
  };
}

/**
 * The node types whose call may run as a local activity, each with its timeout when the node sets
 * none (SingleLLMCallNode: the provider request's, provider-settings.ts; PythonFuncNode: its
 * config's default). A local activity learns of a cancel only when its workflow task next completes
 * (8 s at most); a local node activity therefore also watches for the api's mark of its run's
 * cancel (run-cancel-watch.ts), so Python's processes still stop within 2 s of one (docs/runs.md).
 * Agents, tools and everything else stay regular activities. `kind`: a type only runs started
 * since it could be a short call let it be one (ShortCallKinds), so older histories replay.
 */
const SHORT_CALL_TYPES: Readonly<Record<string, { defaultSeconds: number; kind?: keyof ShortCallKinds }>> = {
  SingleLLMCallNode: { defaultSeconds: 280 },
  PythonFuncNode: { defaultSeconds: 30, kind: 'python' },
};

/** Which short calls a run may make locally: Python nodes only in runs started so (SpurRunInput.localPython). */
export interface ShortCallKinds {
  python: boolean;
}

/**
 * The longest timeout a node may have and still run as a local activity. A local activity longer
 * than the workflow task timeout (10 s) keeps its task alive by completing it and taking a new one
 * every 8 s (three history events each, about what the regular activity it replaced costs in all),
 * and one whose worker dies is run again from the workflow task on another worker after that
 * timeout: so only calls that are short by their own limit run locally (docs/performance.md).
 */
export const LOCAL_CALL_MAX_SECONDS = 60;

/**
 * A short call's options as a local activity, or undefined when the node must stay a regular
 * activity: not a short-call type (of the kinds the run allows), a timeout over
 * LOCAL_CALL_MAX_SECONDS, or heartbeats asked for (`heartbeat_timeout_seconds`: the node wants a
 * dead worker noticed that fast).
 */
export function shortCallOptions(
  node: { node_type: string; config: Record<string, unknown> },
  kinds: ShortCallKinds,
): LocalActivityOptions | undefined {
  const type = SHORT_CALL_TYPES[node.node_type];
  if (!type || (type.kind && !kinds[type.kind]) || node.config.heartbeat_timeout_seconds !== undefined)
    return undefined;
  const seconds = positive(node.config.timeout_seconds, type.defaultSeconds, 24 * 3600);
  if (seconds > LOCAL_CALL_MAX_SECONDS) return undefined;
  const { retry } = ioNodeOptions(node.config);
  // A cancel stops the call (its request aborted) before the run records CANCELED.
  return {
    startToCloseTimeout: `${seconds + 30}s`,
    retry,
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  };
}

/**
 * A delivery's one attempt (a callback POST, a message with approval links), retried with the
 * callbacks' policy until it is taken, refused for good (`refused`) or the time is up. One attempt
 * has its own timeout inside; a dead worker's attempt is retried.
 */
export function deliveryOptions(policy: CallbackRetryPolicy, refused: string): ActivityOptions {
  return {
    startToCloseTimeout: '2m',
    scheduleToCloseTimeout: policy.giveUpAfterMs,
    retry: {
      initialInterval: policy.firstRetryMs,
      backoffCoefficient: 2,
      maximumInterval: policy.maxRetryMs,
      nonRetryableErrorTypes: [refused],
    },
  };
}

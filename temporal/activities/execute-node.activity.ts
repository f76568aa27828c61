import { ApplicationFailure, CancelledFailure, Context } from '@temporalio/activity';
import { ForeignValueRefError, ValueTooLargeError } from '../../src/db/errors';
import type { Models } from '../../src/db/models';
import type { Values } from '../../src/db/values';
import type { PythonSandbox } from '../../src/nodes/code-execution/python-sandbox';
import { NodeExecutionError, TransientNodeError } from '../../src/nodes/errors';
import { NODE_TYPES, getNodeType } from '../../src/nodes/registry';
import type { NodeExecutionContext, NodeTypeDefinition, RagRetriever } from '../../src/nodes/types';
import { FailureType, applicationCause } from '../../src/contracts/failures';
import { type ExecuteNodeResult, type NodeOutput, type TokenUsage } from '../../src/engine/run-contract';
import type { NodeFailureDetails } from '../../src/engine/failure-usage';
import {
  type ExecuteNodeActivity,
  type ExecuteNodeInput,
  type TracedRegionInput,
  nodeActivityName,
} from '../../src/contracts/run-contract';
import type { RegionOutcome } from '../../src/engine/pure-region';
import { activityNodeContext } from './node-context';
import type { OutboundFetch } from '../../src/outbound/outbound-fetch';
import type { PriceBook } from '../../src/usage/price-book';
import type { Budgets } from '../../src/usage/budgets';
import type { SpurTracer } from '../../src/telemetry/tracer';
import { type NodeSpan, inNodeSpan } from '../../src/telemetry/node-span';
import { nodeAttempt } from './node-attempt';
import { releasingSlots } from './slot-release';
import { timedNode } from './node-timing';
import { callbackUrlMinter } from '../../src/nodes/callback-urls';
import type { InboundCallbackClaims } from '../../src/secrets/inbound-callback-token';
import { DEFAULT_WORKSPACE, workspaceScope } from '../../src/db/workspace-scope';
import type { ProviderLimits } from '../../src/usage/provider-limits';
import { limitKeysOf } from '../../src/contracts/limit-contract';
import { modelOf } from '../../src/engine/model-calls';
import { actsForReal } from '../../src/engine/dry-run';
import { dryRunGuard, stubOfNode } from './dry-run-guard';
import { createRunLookups } from '../../src/db/runs/run-lookups';
import { createNodeAttempts } from '../../src/db/runs/node-attempts';
import { createRunCancelRequests } from '../../src/db/runs/run-cancel-requests';
import { stoppingOnCancelMark } from './run-cancel-watch';
import { answeredWrite } from '../../src/engine/task-writes';
import { type SaveProgress, writeRunEnd } from './run-end';

export interface NodeActivityDeps {
  models: Models;
  /** Clear-text provider setting by variable name (env management), for LLM and integration nodes. */
  secret(name: string): Promise<string | undefined>;
  /** The worker's outbound client: every request a node makes goes through it. */
  fetch: OutboundFetch;
  values: Values;
  /** Vector-index queries for RetrieverNode. */
  retriever?: RagRetriever;
  /** Where PythonFuncNode code runs. */
  pythonSandbox?: PythonSandbox;
  /** Prices model calls as they are made. */
  prices: PriceBook;
  /** Workflow budgets: checked before each model call, spending recorded after. */
  budgets: Budgets;
  /** Exports each attempt as a span of its run's trace, when tracing is on. */
  tracer?: SpurTracer;
  /** A WaitForCallbackNode's URL, for `callback_url(…)` in the templates a node renders. */
  callbackUrl?: (claims: InboundCallbackClaims) => string;
  /** The fleet-wide limits: a short call run locally checks none applies to its model (`unlimitedOnly`). */
  limits?: Pick<ProviderLimits, 'on'>;
}

const HEARTBEAT_AT_MOST_EVERY_MS = 5000;
/**
 * The most of a short call's output (a local activity) kept inline; the rest is stored by
 * reference. A worker's 100 local activities then add at most 1.6 MB to a workflow task's
 * completion, under gRPC's 4 MB message limit.
 */
export const LOCAL_RESULT_INLINE_BYTES = 16 * 1024;

/** What a short call's local activity does besides its call (ExecuteNodeInput.save, .followUp, .end). */
export interface CarriedWork {
  saveProgress: SaveProgress;
  runRegion(input: TracedRegionInput): Promise<RegionOutcome[]>;
}

/**
 * One activity type per node type (`executeRouterNode`, `executePythonFuncNode`, …), one body.
 * A short call's carried save is written before the node runs, on the first attempt only: a retry
 * finds it written, or lost with the attempt that failed to write it (the workflow's next save
 * writes every task again). A regular activity (a call over the short-call bound) writes it on every
 * attempt: its retry may follow a worker lost before the save, and the node must show RUNNING. Its
 * follow-up runs once it answered, on the first attempt only; should it fail (its storage away), the
 * call's answer goes back alone and the run runs those nodes itself, so a retry never makes the call
 * again for them.
 */
export function createNodeActivities(
  deps: NodeActivityDeps,
  carried?: CarriedWork,
): Record<string, ExecuteNodeActivity> {
  const run = async (input: ExecuteNodeInput) => {
    // A later attempt's nodes would take its number for their own (node-attempt records): run alone.
    const { attempt, isLocal } = Context.current().info;
    const first = attempt === 1;
    // A regular activity's retry may follow a worker lost before its save: it writes it again (a no-op when written).
    const save = input.save && carried && (first || !isLocal) ? input.save : undefined;
    const saved = save && carried ? await carried.saveProgress(save) : undefined;
    const result = await releasingSlots(input.slots, () => executeNode(deps, input, true));
    const region = first && !result.stoppedForCancel ? input.followUp : undefined;
    const followUp =
      region && carried
        ? await carried
            .runRegion({
              runId: input.runId,
              region: {
                ...region,
                preset: [...region.preset, [input.node.id, { status: 'COMPLETED', output: result.output }]],
              },
              ...(input.trace ? { trace: input.trace } : {}),
            })
            .catch(() => undefined)
        : undefined;
    const ended =
      input.end && carried && first && !result.stoppedForCancel && (followUp || !region)
        ? await writeRunEnd(
            carried.saveProgress,
            input.runId,
            input.end,
            [answeredWrite(input.node, input.input, result), ...(followUp ?? []).map((o) => o.write)],
            saved,
          )
        : undefined;
    return {
      ...result,
      ...(saved !== undefined ? { saved } : {}),
      ...(followUp ? { followUp } : {}),
      ...(ended ? { ended } : {}),
    };
  };
  return Object.fromEntries(NODE_TYPES.map((t) => [nodeActivityName(t.name), run]));
}

/**
 * Runs one node; the workflow records the outcome (the run's projection has a single writer).
 * `ownActivity`: the node is its activity's own (not one of a region's or a batch's rows), whose
 * workflow waits for a cancel it was stopped for (run-cancel-watch.ts).
 */
export function executeNode(
  deps: NodeActivityDeps,
  input: ExecuteNodeInput,
  ownActivity = false,
): Promise<ExecuteNodeResult> {
  return timedNode(input.node.node_type, () =>
    inNodeSpan(deps.tracer, nodeAttempt(input, input.node), (span) =>
      failedAttemptsRecorded(deps, input, () => {
        const work = (signal: AbortSignal) => executeNodeIn(deps, input, span, signal);
        if (!ownActivity) return work(Context.current().cancellationSignal);
        return stoppingOnCancelMark(() => createRunCancelRequests(deps.models).marked(input.runId), work, stopped);
      }),
    ),
  );
}

/** What a node stopped on its run's cancel mark hands back: no outcome (ExecuteNodeResult.stoppedForCancel). */
function stopped(): ExecuteNodeResult {
  const now = new Date().toISOString();
  return { output: {}, startTime: now, endTime: now, stoppedForCancel: true };
}

async function executeNodeIn(
  deps: NodeActivityDeps,
  { runId, node, input, budget, unlimitedOnly, dryRun }: ExecuteNodeInput,
  span: NodeSpan | undefined,
  signal: AbortSignal,
): Promise<ExecuteNodeResult> {
  if (unlimitedOnly) await refuseIfLimited(deps, node);
  const type = getNodeType(node.node_type);
  const execute = type?.execute;
  if (!type || !execute) {
    throw ApplicationFailure.nonRetryable(
      `Node type ${node.node_type} is not executable yet`,
      FailureType.NotExecutable,
    );
  }
  const startTime = new Date().toISOString();
  // In a dry run the node's requests pass the guard, which stops the first one that acts.
  const guard = dryRun && !actsForReal(dryRun, node.node_type) ? dryRunGuard(deps) : undefined;
  const ctx = activityNodeContext(
    guard ? { ...deps, fetch: guard.fetch, secret: guard.secret } : deps,
    runId,
    node.id,
    node.title,
    deps.values.limits.maxBytes,
    budget,
    signal,
  );
  if (guard) ctx.actingFromHere = guard.actingFromHere;
  span?.traceModelCalls(ctx, deps.prices);
  // Nodes see plain values; what they return over the threshold goes back as a reference.
  const plainInput = await ctx.stored(() => deps.values.resolve(input));
  let output: NodeOutput;
  try {
    const mint = callbackMinter(deps, runId);
    output = await withNodeErrors(type, node.config, ctx, (config) => {
      if (guard && type.acts?.(config)) guard.actingFromHere();
      return mint
        ? callbackUrlMinter.run(mint, () => execute(config, plainInput, ctx))
        : execute(config, plainInput, ctx);
    });
  } catch (err) {
    if (!guard?.captured()) throw carryingUsage(err, ctx.usage());
    output = {};
  } finally {
    // Streamed text is stored before the workflow records the task's end, so streams show it first.
    await ctx.flushDeltas();
  }
  // The node acted and sent nothing: whatever it made of that, it hands on what the run a suite
  // row came from recorded for it, else a stub of its output.
  const request = guard?.captured();
  const recorded =
    request && dryRun?.recordedRunId
      ? await ctx.stored(() => recordedOutput(deps, runId, dryRun.recordedRunId as string, node.id))
      : null;
  if (request) output = recorded ?? stubOfNode(type, node.config);
  const usage = ctx.usage();
  let stored: NodeOutput;
  try {
    // A short call's result travels in its workflow task's completion with every other one that
    // ended meanwhile: kept small, so a hundred of them stay far below Temporal's message limit.
    const inline = Context.current().info.isLocal ? LOCAL_RESULT_INLINE_BYTES : undefined;
    stored = await ctx.stored(() => externalizeOutput(deps.values, runId, node, output, inline));
  } catch (err) {
    throw carryingUsage(err, usage);
  }
  return {
    output: stored,
    startTime,
    endTime: new Date().toISOString(),
    ...(usage ? { usage } : {}),
    ...(request
      ? { dryRun: { request, ...(recorded ? { output_from_run: dryRun?.recordedRunId as string } : {}) } }
      : {}),
  };
}

/** Failures that steer the run (a budget's pause, a limit to ask first) rather than end an attempt of the node. */
const STEERING_FAILURES: ReadonlySet<string> = new Set([FailureType.BudgetExceeded, FailureType.ModelLimited]);

/**
 * Records the node's attempt when it fails, apart from the run's record (whose one writer is the
 * workflow, which sees only the last attempt): the run's task then lists each attempt that failed.
 * An attempt whose worker was lost could not say so; the next attempt records it. Nothing is
 * written for an attempt that succeeds, nor read for a first attempt.
 */
async function failedAttemptsRecorded<T>(
  deps: NodeActivityDeps,
  { runId, node }: ExecuteNodeInput,
  body: () => Promise<T>,
): Promise<T> {
  const attempts = createNodeAttempts(deps.models);
  const { attempt, currentAttemptScheduledTimestampMs } = Context.current().info;
  if (attempt > 1 && !(await attempts.recorded(runId, node.id, attempt - 1)))
    await attempts.record(runId, node.id, {
      attempt: attempt - 1,
      start_time: null,
      // When this attempt was scheduled, the lost one had ended (now, should a local activity's info lack it).
      end_time: new Date(
        Number.isFinite(currentAttemptScheduledTimestampMs) ? currentAttemptScheduledTimestampMs : Date.now(),
      ).toISOString(),
      error: 'The worker running it was lost',
    });
  const startTime = new Date().toISOString();
  try {
    return await body();
  } catch (err) {
    const steering = STEERING_FAILURES.has(applicationCause(err)?.type ?? '');
    if (!(err instanceof CancelledFailure) && !steering)
      await attempts
        .record(runId, node.id, {
          attempt,
          start_time: startTime,
          end_time: new Date().toISOString(),
          error: err instanceof Error ? err.message : String(err),
        })
        // The node's own error is what the run must see; an attempt not recorded is recorded as lost by the next.
        .catch(() => undefined);
    throw err;
  }
}

/**
 * A short call run as a local activity asks no limit for a slot: if one applies to its model, it
 * sends nothing and says so, and the run makes the call through the limit (model-slots.ts).
 */
async function refuseIfLimited(deps: NodeActivityDeps, node: ExecuteNodeInput['node']): Promise<void> {
  const model = modelOf(node);
  if (!model || !deps.limits) return;
  const applying = await deps.limits.on(limitKeysOf(model));
  if (applying.length > 0)
    throw ApplicationFailure.nonRetryable(`A fleet-wide limit applies to ${model}`, FailureType.ModelLimited);
}

/**
 * The output `recordedRunId` recorded for `nodeId`, where that run is of the same workflow as this
 * one (and, as every read here, of this workspace); null: none, the node hands on a stub.
 */
async function recordedOutput(
  deps: NodeActivityDeps,
  runId: string,
  recordedRunId: string,
  nodeId: string,
): Promise<NodeOutput | null> {
  const runs = createRunLookups(deps.models);
  const [ours, theirs] = await Promise.all([runs.workflowOf(runId), runs.workflowOf(recordedRunId)]);
  if (ours === null || ours !== theirs) return null;
  const tasks = (await runs.tasksOfMany([recordedRunId])).get(recordedRunId) ?? [];
  const task = tasks.find((t) => t.node_id === nodeId && t.status === 'COMPLETED');
  return task?.outputs ? ((await deps.values.resolve(task.outputs)) as NodeOutput) : null;
}

/** Mints callback URLs of the run's WaitForCallbackNodes, in the run's workspace (the activity's). */
function callbackMinter(deps: NodeActivityDeps, runId: string): ((nodeId: string) => string) | undefined {
  const { callbackUrl } = deps;
  if (!callbackUrl) return undefined;
  const workspaceId = workspaceScope.current() ?? DEFAULT_WORKSPACE;
  return (nodeId) => callbackUrl({ workspaceId, runId, nodeId });
}

/**
 * A value a node cannot hand on (over the value limit, or holding a copied ref) fails the node for
 * good: a retry would produce it again.
 */
export async function refusedValueFailsNode<T>(body: () => T | Promise<T>): Promise<T> {
  try {
    return await body();
  } catch (err) {
    if (err instanceof ValueTooLargeError || err instanceof ForeignValueRefError)
      throw ApplicationFailure.nonRetryable(err.message, FailureType.NodeFailed);
    throw err;
  }
}

export function externalizeOutput(
  values: Values,
  runId: string,
  node: ExecuteNodeInput['node'],
  output: NodeOutput,
  inlineAtMost?: number,
): Promise<NodeOutput> {
  return refusedValueFailsNode(() =>
    values.externalize(runId, output, `The output of node '${node.title}' (${node.id})`, inlineAtMost),
  );
}

/**
 * A failed attempt's failure, carrying the usage of the model calls it had answered (they were
 * paid for): the workflow counts them in the node's task (engine/failure-usage.ts).
 */
export function carryingUsage(err: unknown, usage: TokenUsage | undefined): unknown {
  if (!usage || !(err instanceof Error) || err instanceof CancelledFailure) return err;
  const failure = err instanceof ApplicationFailure ? err : undefined;
  const first: unknown = failure?.details?.[0];
  const details: NodeFailureDetails = { ...(typeof first === 'object' && first !== null ? first : {}), usage };
  return ApplicationFailure.create({
    message: err.message,
    // An unknown error keeps its name as its type, as the SDK would give it: retried by the policy.
    type: (failure ? failure.type : err.name) ?? undefined,
    nonRetryable: failure?.nonRetryable ?? false,
    nextRetryDelay: failure?.nextRetryDelay,
    details: [details],
    cause: failure?.cause,
  });
}

/**
 * Runs `body` with the node's parsed config, heartbeating meanwhile, and maps the node error
 * contract onto Temporal failures: NodeExecutionError fails at once, TransientNodeError retries
 * (with the provider's Retry-After), anything else retries by the activity's policy.
 */
export async function withNodeErrors<T>(
  type: NodeTypeDefinition,
  rawConfig: unknown,
  ctx: NodeExecutionContext,
  body: (config: Parameters<NonNullable<NodeTypeDefinition['execute']>>[0]) => Promise<T>,
): Promise<T> {
  const config = type.config.safeParse(rawConfig ?? {});
  if (!config.success) {
    const problems = config.error.issues.map((i) => `${i.path.join('.') || 'config'}: ${i.message}`).join('; ');
    throw ApplicationFailure.nonRetryable(`Invalid ${type.name} config: ${problems}`, FailureType.NodeFailed);
  }
  // Three heartbeats per heartbeat timeout, so a live worker is never mistaken for a dead one.
  const timeoutMs = Context.current().info.heartbeatTimeoutMs ?? 0;
  const heartbeat = setInterval(
    () => ctx.heartbeat(),
    timeoutMs > 0 ? Math.min(HEARTBEAT_AT_MOST_EVERY_MS, timeoutMs / 3) : HEARTBEAT_AT_MOST_EVERY_MS,
  );
  try {
    return await body(config.data);
  } catch (err) {
    if (err instanceof NodeExecutionError) throw ApplicationFailure.nonRetryable(err.message, FailureType.NodeFailed);
    if (err instanceof TransientNodeError) {
      // A zero delay ends the retries on the server (seen with Retry-After: 0): use the policy's then.
      const delay = err.retryAfterMs && err.retryAfterMs > 0 ? err.retryAfterMs : undefined;
      // The delay also rides in the details: a run under a provider limit retries in its workflow,
      // where the failure converter does not carry nextRetryDelay, and holds the limit back that long.
      // The failure's kind rides there too: the run's release tells a provider limit's breaker.
      const details: NodeFailureDetails = {
        ...(delay ? { retryAfterMs: delay } : {}),
        ...(err.kind ? { failureKind: err.kind } : {}),
      };
      throw ApplicationFailure.create({
        message: err.message,
        type: 'TransientNodeError',
        nextRetryDelay: delay,
        ...(Object.keys(details).length > 0 ? { details: [details] } : {}),
      });
    }
    throw err; // unknown errors are retried by the activity's retry policy
  } finally {
    clearInterval(heartbeat);
  }
}

import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Models } from '../../src/db/models';
import { outlastOutage } from '../../src/db/outage-wait';
import { createRunLookups } from '../../src/db/runs/run-lookups';
import { createTaskDeltas } from '../../src/db/runs/task-deltas';
import { type ModelUsage, type TokenUsage, addModelUsage } from '../../src/engine/run-contract';
import type { PythonSandbox } from '../../src/nodes/code-execution/python-sandbox';
import type { ModelCallUsage, NodeExecutionContext, RagRetriever } from '../../src/nodes/types';
import type { OutboundFetch } from '../../src/outbound/outbound-fetch';
import type { ModelCall, PriceBook } from '../../src/usage/price-book';
import type { Budgets, SpendScope } from '../../src/usage/budgets';
import { promptTokens } from '../../src/usage/prompt-tokens';
import { countModelCall } from '../../src/usage/model-call-metrics';
import { storeDataUris } from '../../src/runs/files';
import { NodeExecutionError } from '../../src/nodes/errors';
import type { BudgetScope } from '../../src/engine/run-contract';
import { FailureType } from '../../src/contracts/failures';
import { randomUUID } from 'node:crypto';
import { createDeltaBatcher } from './task-delta-batcher';

export interface NodeContextDeps {
  models: Models;
  secret(name: string): Promise<string | undefined>;
  /** The worker's outbound client. */
  fetch: OutboundFetch;
  /** Vector-index queries for RetrieverNode. */
  retriever?: RagRetriever;
  /** Where PythonFuncNode code runs. */
  pythonSandbox?: PythonSandbox;
  /** Prices the node's model calls. */
  prices: PriceBook;
  /** Workflow budgets: checked before each model call, spending recorded after. */
  budgets: Budgets;
  /**
   * False: the node's model calls take no text as it comes (a call that goes out in a provider
   * batch is answered whole, never streamed).
   */
  streamsText?: boolean;
}

/** Where a stored file path lives: run inputs' files and test files have their own buckets. */
function bucketOf(models: Models, path: string) {
  if (path.startsWith('run_files/')) return models.runFiles;
  if (path.startsWith('test_files/')) return models.testFiles;
  return null;
}

async function readStoredFile(
  models: Models,
  path: string,
): Promise<{ bytes: Buffer; mimeType: string; name: string } | null> {
  const bucket = bucketOf(models, path);
  if (!bucket) return null;
  // GridFS files carry no workspace: one is this run's only if its workflow (`<bucket>/<workflow>/…`) is
  // in the run's workspace, which the scoped lookup says; another workspace's path reads as no file.
  const workflowId = path.split('/')[1];
  if (!workflowId || !(await models.Workflow.exists({ _id: workflowId }))) return null;
  const [file] = await bucket.find({ filename: path }).sort({ uploadDate: -1 }).limit(1).toArray();
  if (!file) return null;
  const chunks: Buffer[] = [];
  for await (const chunk of bucket.openDownloadStream(file._id)) chunks.push(chunk as Buffer);
  const meta = file.metadata as { content_type?: unknown } | undefined;
  return {
    bytes: Buffer.concat(chunks),
    mimeType: typeof meta?.content_type === 'string' ? meta.content_type : 'application/octet-stream',
    name: path.split('/').at(-1) ?? path,
  };
}

/** One execution across its attempts: its workflow run and activity id (ids restart after continue-as-new). */
function callKeyOf(info: Context['info']): string {
  const execution = info.workflowExecution;
  return `${execution?.workflowId ?? ''}/${execution?.runId ?? ''}/${info.activityId}`;
}

/**
 * The context a node executes with inside an activity; `usage()` is what its LLM calls used,
 * `flushDeltas()` stores the last of the text it streamed (before the task's end is recorded).
 * `signal` stops the node: the activity's cancellation unless the caller watches more
 * (run-cancel-watch.ts).
 */
export function activityNodeContext(
  deps: NodeContextDeps,
  runId: string,
  nodeId: string,
  nodeTitle: string,
  maxValueBytes?: number,
  budget?: BudgetScope,
  signal: AbortSignal = Context.current().cancellationSignal,
): NodeExecutionContext & {
  usage(): TokenUsage | undefined;
  flushDeltas(): Promise<void>;
  /** Runs a read or write of the node's, waiting out a database outage (outage-wait.ts). */
  stored<T>(work: () => Promise<T>): Promise<T>;
} {
  const activity = Context.current();
  // One entry per answered call of this execution: a retried write of it counts the spending once.
  const spendEntryPrefix = `${runId}/${nodeId}/${randomUUID()}`;
  let callCount = 0;
  const deltas = createDeltaBatcher(createTaskDeltas(deps.models), runId, nodeId, (err) =>
    activity.log.warn('task delta not stored', { runId, nodeId, error: String(err) }),
  );
  // Temporal keeps only the latest heartbeat's details: the periodic beats repeat the node's last
  // ones (a crawl id), so a retry after a crash still finds them.
  let last: unknown;
  // A local activity (a short call, activity-options.ts) has no heartbeat: its workflow task keeps it alive.
  const beat = activity.info.isLocal ? () => undefined : () => activity.heartbeat(last);
  // What the node reads from the database waits out an outage rather than failing the attempt.
  const outage = { signal, whileWaiting: beat };
  const stored = <T>(read: () => Promise<T>) => outlastOutage(read, outage);
  // The run's workflow, read once for all the files a node stores (an MCP result's images, stored
  // side by side); a failed read is not kept, so the next file (or the outage wait) reads again.
  let workflowOfRun: Promise<string | null> | undefined;
  const workflowId = () =>
    (workflowOfRun ??= createRunLookups(deps.models)
      .workflowOf(runId)
      .catch((err: unknown) => {
        workflowOfRun = undefined;
        throw err;
      }));
  /** Holds the call's worst case; throws when it would pass the budget. Null: nothing held. */
  const holdFor = async (
    scope: SpendScope,
    call: { model: string; prompt: string; maxOutputTokens: number },
    callId: string,
  ) => {
    const planned = {
      model: call.model,
      promptTokens: () => promptTokens(call.prompt),
      maxOutputTokens: call.maxOutputTokens,
    };
    // A try after the first (an outage waited out) may follow one whose hold was written.
    let tries = 0;
    const outcome = await stored(() => deps.budgets.hold(scope, planned, callId, tries++ > 0));
    if ('holdId' in outcome) return outcome.holdId;
    if (outcome.excess.on_exceed === 'fail') throw new NodeExecutionError(outcome.excess.message);
    // The run pauses at the node for a person (model-slots.ts): not a failure to retry.
    throw ApplicationFailure.nonRetryable(outcome.excess.message, FailureType.BudgetExceeded);
  };
  // Each answered call is priced and recorded as spent as its answer arrives: it was paid for,
  // whatever then happens to the node or the attempt (a later call failing, an invalid reply).
  const priced: ModelUsage[] = [];
  const paid = async (
    scope: SpendScope | undefined,
    held: string | null,
    callId: string,
    model: string,
    used: ModelCallUsage,
  ) => {
    const call: ModelCall = {
      model,
      prompt_tokens: used.prompt_tokens,
      completion_tokens: used.completion_tokens,
      ...(used.cached_tokens ? { cached_tokens: used.cached_tokens } : {}),
      ...(used.cache_write_tokens ? { cache_write_tokens: used.cache_write_tokens } : {}),
    };
    // Pricing a call that was made must not fail the attempt into repeating it: outages are waited out.
    const [cost] = await stored(() => deps.prices.price([call]));
    if (!cost) return;
    countModelCall(model, call, cost.cost_nano_usd);
    priced.push(cost);
    if (!scope) return;
    await stored(() => deps.budgets.spend(callId, held, scope, cost.cost_nano_usd ?? 0));
  };
  return {
    runId,
    nodeId,
    nodeTitle,
    signal,
    secret: (name) => stored(() => deps.secret(name)),
    fetch: deps.fetch,
    heartbeat: (details) => {
      if (details !== undefined) last = details;
      beat();
    },
    heartbeatDetails: activity.info.heartbeatDetails,
    callKey: callKeyOf(activity.info),
    payForModelCall: async (call, send) => {
      const callId = `${spendEntryPrefix}/${++callCount}`;
      const scope = budget ? { workflowId: budget.workflowId, runId } : undefined;
      // A person approved passing the budget (APPROVE on its pause): the calls go unheld.
      const held = scope && !budget?.overBudget ? await holdFor(scope, call, callId) : null;
      let reply;
      try {
        reply = await send();
      } catch (err) {
        if (held) await stored(() => deps.budgets.release(held));
        throw err;
      }
      // An answer that reports no usage leaves its hold at the worst case: it was paid, for how much is unknown.
      if (reply.usage) await paid(scope, held, callId, call.model, reply.usage);
      return reply;
    },
    ...(deps.streamsText === false ? {} : { delta: (text: string) => deltas.push(text) }),
    flushDeltas: () => deltas.flush(),
    stored,
    readFile: (path) => stored(() => readStoredFile(deps.models, path)),
    storeFile: (dataUri) =>
      stored(async () => {
        const workflow = await workflowId();
        return workflow === null ? null : ((await storeDataUris(deps.models, workflow, dataUri)) as string);
      }),
    usage: () => {
      if (priced.length === 0) return undefined;
      const models = addModelUsage([], priced);
      const prompt = models.reduce((n, m) => n + m.prompt_tokens, 0);
      const completion = models.reduce((n, m) => n + m.completion_tokens, 0);
      return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion, models };
    },
    ...(deps.retriever ? { retrieve: deps.retriever } : {}),
    ...(deps.pythonSandbox ? { pythonSandbox: deps.pythonSandbox } : {}),
    ...(maxValueBytes !== undefined ? { maxValueBytes } : {}),
  };
}

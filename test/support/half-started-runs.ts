import { trusted } from 'mongoose';
import { runWorkflowId } from '../../src/contracts/workflow-names';
import { runActionWorkflowId } from '../../src/contracts/run-action-contract';
import { type ApiProcess, startApiProcess } from './api-process';
import type { Engine } from './engine';
import { until } from './exec-log';
import { type TcpRelay, startTcpRelay } from './tcp-relay';

/**
 * What an api killed with kill -9 in the middle of a request leaves behind, made for real: a second
 * api process on the engine's database and task queue, whose database and Temporal traffic pass
 * through relays, is stopped at the chosen step by holding the next request there, and killed.
 */
interface RelayedApi {
  api: ApiProcess;
  temporal: TcpRelay;
  mongo: TcpRelay;
}

async function relayedApi(engine: Engine): Promise<RelayedApi> {
  const [host, port] = engine.api.env.SPUR_TEMPORAL_ADDRESS!.split(':') as [string, string];
  const temporal = await startTcpRelay({ host, port: Number(port) });
  const mongoUrl = new URL(engine.api.env.SPUR_MONGODB_URI!);
  const mongo = await startTcpRelay({ host: mongoUrl.hostname, port: Number(mongoUrl.port) }, 'mongodb');
  mongoUrl.host = mongo.address;
  const api = await startApiProcess({
    ...engine.api.env,
    SPUR_TEMPORAL_ADDRESS: temporal.address,
    SPUR_MONGODB_URI: mongoUrl.toString(),
  });
  return { api, temporal, mongo };
}

/** The request's connection breaks with the kill: that is expected, not a failure. */
async function killed(relayed: RelayedApi, request: Promise<unknown>): Promise<void> {
  relayed.api.process.kill('SIGKILL');
  await relayed.api.process.exited;
  await request;
  await Promise.all([relayed.temporal.close(), relayed.mongo.close()]);
}

/** An insert command into `collection`: its BSON string element `insert: <collection>`. */
function insertInto(collection: string): Buffer {
  const name = Buffer.from(`${collection}\0`);
  const length = Buffer.alloc(4);
  length.writeInt32LE(name.length);
  return Buffer.concat([Buffer.from([0x02]), Buffer.from('insert\0'), length, name]);
}

/** An insert into the idempotency keys: a claim (the look before it is a find). */
const CLAIM = insertInto('idempotency_keys');
const isClaim = (message: Buffer) => message.includes(CLAIM);

/** A write command (its name is the first string element of the message's body). */
const WRITES = ['insert', 'update', 'delete', 'findAndModify'].map((name) =>
  Buffer.concat([Buffer.from([0x02]), Buffer.from(`${name}\0`)]),
);
const isWrite = (message: Buffer) => WRITES.some((marker) => message.includes(marker));

/**
 * A `start_run` whose api was killed after recording the run; with a key, after claiming it for
 * the run (`claimed`) or just before the claim. Its workflow never started, no answer was sent.
 * Returns the run's id.
 */
export const runLeftUnstarted = (
  engine: Engine,
  workflowId: string,
  initialInputs: Record<string, unknown>,
  keyed?: { key: string; claimed: boolean },
) => leftUnstarted(engine, workflowId, `/wf/${workflowId}/start_run/`, { initial_inputs: initialInputs }, keyed);

/** A `start_batch_run` whose api was killed after recording the batch, before starting its workflow. */
export const batchLeftUnstarted = (engine: Engine, workflowId: string, datasetId: string) =>
  leftUnstarted(engine, workflowId, `/wf/${workflowId}/start_batch_run/`, {
    dataset_id: datasetId,
    mini_batch_size: 1,
  });

/** A rerun of `original` (a run of `workflowId`) whose api was killed after recording it, before starting its workflow. */
export const rerunLeftUnstarted = (
  engine: Engine,
  workflowId: string,
  original: string,
  body: Record<string, unknown>,
) => leftUnstarted(engine, workflowId, `/run/${original}/rerun/`, body);

async function leftUnstarted(
  engine: Engine,
  workflowId: string,
  route: string,
  body: Record<string, unknown>,
  keyed?: { key: string; claimed: boolean },
): Promise<string> {
  const relayed = await relayedApi(engine);
  const claimed = keyed?.claimed ?? false;
  if (keyed && !claimed) relayed.mongo.hold(isClaim);
  else relayed.temporal.hold();
  const headers: Record<string, string> = keyed ? { 'Idempotency-Key': keyed.key } : {};
  const sent = new Date();
  const request = relayed.api.http.request('POST', route, body, headers).catch(() => undefined);
  let runId = '';
  await until('the run recorded (and its key claimed)', async () => {
    const run = await engine.api.models.Run.findOne({
      workflow_id: workflowId,
      start_time: trusted({ $gte: sent }),
    }).lean();
    runId = run ? String(run._id) : '';
    if (!run || !claimed) return run !== null;
    return (await engine.api.models.IdempotencyKey.countDocuments({ run_id: runId })) > 0;
  });
  await killed(relayed, request);
  const handle = engine.api.temporal.workflow.getHandle(runWorkflowId(runId, engine.api.env.SPUR_WORKFLOW_ID_PREFIX));
  if (
    await handle.describe().then(
      () => true,
      () => false,
    )
  )
    throw new Error(`the workflow of run ${runId} started before the api was killed`);
  return runId;
}

/** `runLeftUnstarted` of a request with an Idempotency-Key. */
export const keyedRunLeftUnstarted = (
  engine: Engine,
  workflowId: string,
  key: string,
  initialInputs: Record<string, unknown>,
  claimed: boolean,
) => runLeftUnstarted(engine, workflowId, initialInputs, { key, claimed });

/**
 * A keyed `process_pause_action` whose api was killed after claiming the key, no answer stored;
 * with `applied`, after the decision went through to the workflow (the answer's write held),
 * else before it left the api (the update held).
 */
export async function keyedPauseActionLeftUnanswered(
  engine: Engine,
  runId: string,
  key: string,
  decision: Record<string, unknown>,
  applied: boolean,
): Promise<void> {
  const handle = engine.api.temporal.workflow.getHandle(runWorkflowId(runId, engine.api.env.SPUR_WORKFLOW_ID_PREFIX));
  const updatesDone = async () =>
    ((await handle.fetchHistory()).events ?? []).filter((e) => e.workflowExecutionUpdateCompletedEventAttributes)
      .length;
  const before = await updatesDone();
  const relayed = await relayedApi(engine);
  relayed.temporal.hold();
  const request = relayed.api.http
    .request('POST', `/wf/process_pause_action/${runId}/`, decision, { 'Idempotency-Key': key })
    .catch(() => undefined);
  await until(
    'the key claimed',
    async () => (await engine.api.models.IdempotencyKey.countDocuments({ run_id: runId, key })) > 0,
  );
  if (applied) {
    // From here the api writes nothing more (its reads still pass, so it gets as far as sending
    // the decision however far it had got); the decision then reaches the workflow.
    relayed.mongo.hold(isWrite);
    relayed.temporal.release();
    await until('the decision applied in the workflow', async () => (await updatesDone()) > before);
  }
  await killed(relayed, request);
}

/**
 * A POST whose api was killed once `recorded` finds what it recorded. From the start, `held` traffic
 * does not pass: every Temporal call (nothing started), or the database messages it matches (with
 * everything the api sends after them on that connection). Returns what `recorded` found.
 */
export async function killedOnceRecorded<T>(
  engine: Engine,
  route: string,
  body: Record<string, unknown>,
  recorded: (since: Date) => Promise<T | null>,
  held: 'temporal' | ((message: Buffer) => boolean) = 'temporal',
): Promise<T> {
  const relayed = await relayedApi(engine);
  if (held === 'temporal') relayed.temporal.hold();
  else relayed.mongo.hold(held);
  const sent = new Date();
  const request = relayed.api.http.request('POST', route, body).catch(() => undefined);
  let found: T | null = null;
  await until('the request recorded', async () => {
    found = await recorded(sent);
    return found !== null;
  });
  await killed(relayed, request);
  return found as T;
}

/**
 * An eval launch (`/evals/launch/`) or comparison (`/evals/compare/`) whose api was killed once
 * `recorded` finds what it recorded, before any workflow started (every Temporal call held).
 * Returns what `recorded` found.
 */
export const evalLeftUnstarted = <T>(
  engine: Engine,
  route: string,
  body: Record<string, unknown>,
  recorded: (since: Date) => Promise<T | null>,
): Promise<T> => killedOnceRecorded(engine, route, body, recorded);

/** An insert into a bulk action's matched runs (the items, stored after the action itself). */
const ITEMS_INSERT = insertInto('run_action_items');

/**
 * A bulk action (`POST /runs/actions/`) whose api was killed after storing it: with `matches:
 * "stored"`, every matched run too, before its workflow started; with `"cut"`, before any matched
 * run was stored. Returns the action's id.
 */
export async function runActionLeftUnstarted(
  engine: Engine,
  body: Record<string, unknown>,
  matches: 'stored' | 'cut',
): Promise<string> {
  const { RunAction, RunActionItem } = engine.api.models;
  const id = await killedOnceRecorded(
    engine,
    '/runs/actions/',
    body,
    async (since) => {
      const action = await RunAction.findOne({ created_at: trusted({ $gte: since }) }).lean();
      if (!action) return null;
      if (matches === 'cut') return String(action._id);
      // Stored in full once the last of them is, and the action marked so.
      const stored = await RunActionItem.countDocuments({ action_id: action._id });
      return stored === action.matched && action.recorded ? String(action._id) : null;
    },
    matches === 'stored' ? 'temporal' : (message) => message.includes(ITEMS_INSERT),
  );
  const handle = engine.api.temporal.workflow.getHandle(
    runActionWorkflowId(id, engine.api.env.SPUR_WORKFLOW_ID_PREFIX),
  );
  if (
    await handle.describe().then(
      () => true,
      () => false,
    )
  )
    throw new Error(`the workflow of bulk action ${id} started before the api was killed`);
  return id;
}

import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { runWorkflowId } from '../../src/contracts/workflow-names';
import { n } from './graphs';

/**
 * Where and how often a run's nodes executed, as Temporal itself recorded it: the test's instrument
 * for crash suites, so their Python runs in the default sandbox (which lets nothing write to the
 * host). Temporal counts every start of an activity (`attempt`) and names the worker that took it
 * (its identity, `<pid>@<host>`), whether the attempt finished or the worker died under it.
 */
export interface NodeAttempt {
  /** The node id, from the activity's summary `<title> (<id>)`. */
  node: string;
  /** 1: the node ran once; more: it was started again after a failure or a lost worker. */
  attempt: number;
  /** The pid of the worker that took the latest attempt (null before any took it). */
  workerPid: number | null;
  state: 'scheduled' | 'running' | 'completed' | 'failed';
  /** When the running attempt started (ms since the epoch, Temporal's clock); null otherwise. */
  startedAt: number | null;
}

const { PendingActivityState } = temporal.api.enums.v1;

const key = (id: unknown) => String(id);
/** A protobuf timestamp of Temporal's (ms since the epoch). */
export const timestampMs = (t: { seconds?: { toNumber(): number } | number | null; nanos?: number | null }) =>
  Number(typeof t.seconds === 'number' ? t.seconds : (t.seconds?.toNumber() ?? 0)) * 1000 +
  Math.floor((t.nanos ?? 0) / 1e6);
const pidOf = (identity: string | null | undefined) => (identity ? Number(identity.split('@')[0]) || null : null);

function nodeOf(summary: { data?: Uint8Array | null } | null | undefined): string {
  const text = summary?.data ? (JSON.parse(Buffer.from(summary.data).toString('utf8')) as string) : '';
  return /\(([^()]+)\)$/.exec(text)?.[1] ?? text;
}

/** Every node activity of a run: the closed ones from its history, the open ones from its description. */
export async function nodeAttempts(client: Client, workflowIdPrefix: string, runId: string): Promise<NodeAttempt[]> {
  const handle = client.workflow.getHandle(runWorkflowId(runId, workflowIdPrefix));
  const [history, description] = await Promise.all([handle.fetchHistory(), handle.describe()]);
  const scheduled = new Map<string, { node: string; activityId: string }>();
  const started = new Map<string, { attempt: number; identity: string | null | undefined }>();
  const closed = new Map<string, NodeAttempt['state']>();
  for (const e of history.events ?? []) {
    const s = e.activityTaskScheduledEventAttributes;
    if (s) scheduled.set(key(e.eventId), { node: nodeOf(e.userMetadata?.summary), activityId: s.activityId ?? '' });
    const st = e.activityTaskStartedEventAttributes;
    if (st) started.set(key(st.scheduledEventId), { attempt: st.attempt ?? 1, identity: st.identity });
    const done = e.activityTaskCompletedEventAttributes;
    if (done) closed.set(key(done.scheduledEventId), 'completed');
    const failed =
      e.activityTaskFailedEventAttributes ??
      e.activityTaskTimedOutEventAttributes ??
      e.activityTaskCanceledEventAttributes;
    if (failed) closed.set(key(failed.scheduledEventId), 'failed');
  }
  const pending = new Map((description.raw.pendingActivities ?? []).map((p) => [p.activityId ?? '', p]));
  return [...scheduled.entries()].map(([eventId, { node, activityId }]) => {
    const open = pending.get(activityId);
    // The history is definitive: an attempt it closed is closed, whatever an earlier description said.
    if (open && !closed.has(eventId)) {
      const running = open.state === PendingActivityState.PENDING_ACTIVITY_STATE_STARTED;
      return {
        node,
        attempt: open.attempt ?? 1,
        workerPid: pidOf(open.lastWorkerIdentity),
        state: running ? 'running' : 'scheduled',
        startedAt: running && open.lastStartedTime ? timestampMs(open.lastStartedTime) : null,
      };
    }
    const start = started.get(eventId);
    return {
      node,
      attempt: start?.attempt ?? 0,
      workerPid: pidOf(start?.identity),
      state: closed.get(eventId) ?? 'scheduled',
      startedAt: null,
    };
  });
}

/** The latest execution of `node` in a run's attempts (undefined before it is scheduled). */
export const attemptOf = (attempts: NodeAttempt[], node: string) => attempts.filter((a) => a.node === node).at(-1);

/**
 * A PythonFuncNode that sleeps `seconds` and returns `{"<key>": <value of the input field>-<node id>}`:
 * what a crash interrupts, seen through `nodeAttempts`.
 */
export function sleeper(id: string, seconds: number, from: { node: string; field: string }, key: string) {
  const code = [
    'import time',
    `time.sleep(${seconds})`,
    `return {"${key}": input_model.${from.node}.${from.field} + "-${id}"}`,
  ].join('\n');
  return n(id, 'PythonFuncNode', {
    code,
    timeout_seconds: 60,
    heartbeat_timeout_seconds: 10,
    output_schema: { [key]: 'string' },
  });
}

/** `nodeAttempts` bound to an api's Temporal client and workflow ids, with the questions crash tests ask. */
export function attemptsOf(api: { temporal: Client; config: { temporal: { workflowIdPrefix: string } } }) {
  const all = (runId: string) => nodeAttempts(api.temporal, api.config.temporal.workflowIdPrefix, runId);
  /** A run's activities of `node`, in the order they were scheduled. */
  const ofNode = async (runId: string, node: string) => (await all(runId)).filter((a) => a.node === node);
  /** Whether every run has an activity of `node` in one of `states`. */
  const allAt = async (runIds: string[], node: string, states: NodeAttempt['state'][]) =>
    (await Promise.all(runIds.map((id) => ofNode(id, node)))).every((list) =>
      list.some((a) => states.includes(a.state)),
    );
  /**
   * Every run has reached `node` (running it or done with it) and one still runs it: runs in flight
   * there. Waiting for all to run it at once fails on a loaded machine, where the first may finish
   * before the last starts.
   */
  const inFlightAt = async (runIds: string[], node: string) => {
    const lists = await Promise.all(runIds.map((id) => ofNode(id, node)));
    const at = (list: NodeAttempt[], states: NodeAttempt['state'][]) => list.some((a) => states.includes(a.state));
    return lists.every((list) => at(list, ['running', 'completed'])) && lists.some((list) => at(list, ['running']));
  };
  return { all, ofNode, allAt, inFlightAt };
}

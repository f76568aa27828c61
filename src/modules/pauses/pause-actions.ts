import { randomUUID } from 'node:crypto';
import { type Client, WorkflowNotFoundError } from '@temporalio/client';
import type { Models, PauseDoc, RunDoc, WorkflowVersionDoc } from '../../db/models';
import type { Values } from '../../db/values';
import { storeClientValues } from '../../runs/values';
import type { RunRepository } from '../../db/runs/run-repository';
import { BadRequestError, ForbiddenError, notFound } from '../../errors';
import {
  type PauseActionRequest,
  type PauseDecider,
  PauseRefusal,
  notAnApprover,
  pauseActionSignal,
  pauseActionUpdate,
} from '../../contracts/pauses';
import {
  PauseRefused,
  isAbortedByTaskFailure,
  isDeadline,
  isWorkflowTaskFailing,
  pauseForbiddenOf,
  pauseRefusalOf,
} from '../../runs/pause-update-errors';
import { fromJsonText } from '../../db/json-text';
import { runWorkflowId } from '../../contracts/workflow-names';
import type { RunReader, VersionById } from '../../runs/reader';
import { toRunResponse } from '../../runs/response';
import type { RunResponse } from '../../runs/response.schemas';
import { type Approvers, type DecisionChannel, approvalPlan, mayDecide } from '../../engine/approvals';
import type { ResumeRunInput } from './pauses.schemas';
import { isFinalStatus } from '../../engine/statuses';
import type { Decider } from './deciders';
import type { AccessUserStore } from '../../db/access-users';
import type { WorkspaceMembers } from '../../db/workspace-members';

export interface PauseServiceDeps {
  models: Models;
  values: Values;
  runRecords: RunRepository;
  reader: RunReader;
  /** Versions by id, through the process's cache of recently read ones. */
  versionById: VersionById;
  temporal: Client;
  workflowIdPrefix: string;
  /** How long an action waits for a worker to apply it before it is queued as a signal. */
  actionWaitMs: number;
  /** The users a decider may be (their username and role). */
  users: Pick<AccessUserStore, 'get'>;
  /** A decider's role in the pause's workspace. */
  members: Pick<WorkspaceMembers, 'roleOf'>;
}

const decidedBy = (last: PauseDecider | null, body: ResumeRunInput, decider: Decider): boolean =>
  last !== null && last.action === body.action && last.userId === decider.userId;
/** How soon an action refused by a workflow still replaying up to its pause is sent again. */
const REPLAY_RETRY_MS = 250;

/** The `approvers` of a run's HumanInterventionNode as its pinned version has them (null: none named). */
function approversOfNode(version: WorkflowVersionDoc | null, nodeId: string): Approvers | null {
  const definition = fromJsonText<{ nodes?: { id: string; node_type?: string; config?: Record<string, unknown> }[] }>(
    version?.definition,
  );
  const node = definition?.nodes?.find((n) => n.id === nodeId);
  return node?.node_type === 'HumanInterventionNode' ? approvalPlan(node.config ?? {}).approvers : null;
}

/** The run's record, or 404. */
export async function loadRun(runRecords: Pick<RunRepository, 'recordOf'>, runId: string): Promise<RunDoc> {
  const run = await runRecords.recordOf(runId);
  if (!run) throw notFound.run();
  return run;
}

/**
 * A human's decision on a paused run, sent to its workflow (`process_pause_action` and the
 * approval links): how it goes, how the workflow's and Temporal's answers read, when it is queued.
 */
export function createPauseActions({
  models,
  values,
  runRecords,
  reader,
  versionById,
  temporal,
  workflowIdPrefix,
  actionWaitMs,
}: PauseServiceDeps) {
  const { Pause } = models;
  const handle = (runId: string) => temporal.workflow.getHandle(runWorkflowId(runId, workflowIdPrefix));

  const versionOf = (run: RunDoc): Promise<WorkflowVersionDoc | null> =>
    run.workflow_version_id ? versionById(run.workflow_version_id) : Promise.resolve(null);

  /** The run as the action left it: its record with its tasks; its version (it never changes) was read meanwhile. */
  async function runAfterAction(runId: string, version: Promise<WorkflowVersionDoc | null>): Promise<RunResponse> {
    const [run, v] = await Promise.all([runRecords.recordOf(runId), version]);
    if (!run) throw notFound.run();
    return toRunResponse(run, (await runRecords.tasksIn([run])).get(runId) ?? [], v);
  }

  /** The open pause a decision is for, as the records show it: the link's, or the run's oldest. */
  function openPauseOf(runId: string, link: { pauseId: string } | undefined): Promise<PauseDoc | null> {
    return link
      ? Pause.findOne({ _id: link.pauseId, resume_time: null }).lean<PauseDoc>()
      : runRecords.openPausesOf(runId).then((open) => open[0] ?? null);
  }

  /** Whether the run's latest pause was resolved with this decision (its action, by its decider). */
  async function resolvedBy(runId: string, body: ResumeRunInput, decider: Decider): Promise<boolean> {
    const [last] = await runRecords.pausePageOf(runId, 0, 1);
    return last?.resume_time != null && last.resume_action === body.action && last.resume_user_id === decider.userId;
  }

  /**
   * Delivers the action as an Update: the workflow validates it (so a stale or second action is
   * refused with PySpur's 400s) and answers once it is applied. If no worker takes it within
   * `actionWaitMs`, the same action goes as a durable signal and is applied when one returns (202).
   * `updateId` (an Idempotency-Key's) makes Temporal apply one decision once, however often it is sent.
   * The decision is `decider`'s (deciders.ts), whatever `user_id` the body named: the workflow
   * refuses one its pause's `approvers` leave out (403).
   */
  async function act(
    runId: string,
    body: ResumeRunInput,
    decider: Decider,
    updateId?: string,
    link?: { pauseId: string; channel: DecisionChannel },
  ): Promise<{ status: number; run: unknown }> {
    const run = await loadRun(runRecords, runId);
    if (isFinalStatus(run.status)) throw new BadRequestError(PauseRefusal.notPaused);
    // The human's inputs become part of the node's output: large ones travel by reference too.
    const inputs = await storeClientValues(values, runId, body.inputs, 'inputs');
    const request: PauseActionRequest = {
      action: body.action,
      inputs,
      userId: decider.userId,
      username: decider.username,
      role: decider.role,
      comments: body.comments,
      // A link decides the pause it was sent for, and says through which channel it came.
      ...(link ? { pauseId: link.pauseId, channel: link.channel } : {}),
    };
    const version = versionOf(run);
    version.catch(() => undefined); // awaited after the Update; a refusal does not need it
    const deadline = Date.now() + actionWaitMs;
    // One id for every try: a retry of an Update the server did apply answers its outcome.
    const id = updateId ?? randomUUID();
    let sent = request;
    const send = () =>
      temporal.withDeadline(deadline, () =>
        handle(runId).executeUpdate(pauseActionUpdate, { args: [sent], updateId: id }),
      );
    for (;;) {
      try {
        await send();
        return { status: 200, run: await runAfterAction(runId, version) };
      } catch (err) {
        // A workflow task that completed the run while a signal arrived (an approval delivery telling
        // its run) is failed by the server with UnhandledCommand, aborting the Update it carried: sent
        // again while the wait lasts. Each recipient's delivery can arrive so, so one retry is not
        // always enough; past the wait the action goes as a signal (below).
        if (isAbortedByTaskFailure(err)) {
          if (Date.now() >= deadline) break;
          continue;
        }
        const forbidden = pauseForbiddenOf(err);
        if (forbidden) throw forbidden;
        const refusal = pauseRefusalOf(err);
        // A worker replaying up to a pause whose record a crashed task wrote gets this Update with
        // its task, ahead of the pause. Named, the pause says so: the action is sent again until
        // the replay has reached it, and past the action's wait it goes as a signal (below), which
        // the workflow keeps until it does.
        if (refusal?.ahead) {
          if (Date.now() >= deadline) break;
          await new Promise((r) => setTimeout(r, REPLAY_RETRY_MS));
          continue;
        }
        // Unnamed, it is named after the open pause the records show, and asked again.
        if (refusal && sent.pauseId === undefined && refusal.message !== PauseRefusal.alreadyDecided) {
          const open = await openPauseOf(runId, link);
          if (open) {
            sent = { ...sent, pauseId: open._id };
            continue;
          }
        }
        if (refusal) throw refusal;
        if (err instanceof WorkflowNotFoundError) throw new BadRequestError(PauseRefusal.notPaused);
        if (!isDeadline(err) && !isWorkflowTaskFailing(err)) throw err;
        break;
      }
    }
    const open = await openPauseOf(runId, link);
    if (!open) {
      // The Update can be applied after the wait ran out (a slow server): then this decision resolved it.
      if (await resolvedBy(runId, body, decider)) return { status: 200, run: await reader.get(runId) };
      throw new BadRequestError(PauseRefusal.noPausedTask);
    }
    // No worker answered: the records judge what the workflow's validator would (it drops the signal too).
    if (!mayDecide(approversOfNode(await version, open.node_id), decider))
      throw new ForbiddenError(notAnApprover(decider.userId, open.node_id), 'NOT_AN_APPROVER');
    await handle(runId).signal(pauseActionSignal, { ...request, pauseId: open._id });
    // (A decision that did not settle a quorum is answered 202 as well: the workflow records it.)
    const queued = await reader.get(runId);
    return {
      status: 202,
      run: { ...queued, message: 'The action is recorded and will be applied when a worker is available.' },
    };
  }

  /**
   * A keyed decision whose first request died unanswered: sent again under the same update id
   * (Temporal answers an update it has seen with its outcome). Refused because the pause is
   * resolved: if it was resolved by this very decision, that is the answer. The workflow's refusal
   * names its latest decider; only a run the workflow no longer holds is judged by the records,
   * since a decision that went as a signal reaches the database only with the run's next save.
   */
  async function actAgain(
    runId: string,
    body: ResumeRunInput,
    decider: Decider,
    updateId: string,
  ): Promise<{ status: number; run: unknown }> {
    try {
      return await act(runId, body, decider, updateId);
    } catch (err) {
      if (!(err instanceof BadRequestError)) throw err;
      const mine =
        err instanceof PauseRefused
          ? decidedBy(err.lastDecider, body, decider)
          : await resolvedBy(runId, body, decider);
      if (!mine) throw err;
      return { status: 200, run: await reader.get(runId) };
    }
  }

  return { act, actAgain };
}

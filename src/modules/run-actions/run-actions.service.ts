import { type Client, WorkflowNotFoundError } from '@temporalio/client';
import { type Caller, actsForOperator, starterName } from '../../access/caller';
import { callerAllows } from '../../access/permissions';
import type { Config } from '../../config/settings';
import {
  ACTION_PERMISSIONS,
  PAUSE_ACTION_OF,
  type RunActionKind,
  runActionWorkflowId,
} from '../../contracts/run-action-contract';
import type { Models, RunActionDoc, RunActionItemDoc } from '../../db/models';
import type { Page } from '../../db/paging';
import { pageBounds } from '../../db/paging';
import { createRunActions } from '../../db/run-actions';
import { type RunFilter, createRunMatches } from '../../db/runs/run-matches';
import { ConflictError, ForbiddenError, NotFoundError, SpurError } from '../../errors';
import { runCaller } from '../../runs/run-caller';
import { startRunActionWorkflow } from '../../runs/run-action-start';
import type { Deciders } from '../pauses/deciders';
import type { RunActionAnswer, RunActionBody } from './run-actions.schemas';

export interface RunActionServiceDeps {
  models: Models;
  temporal: Client;
  config: Pick<Config['temporal'], 'taskQueue' | 'workflowIdPrefix' | 'fairShare'>;
  /** SPUR_RUN_ACTION_RATE: runs acted on per second at most. */
  rate: number;
  deciders: Deciders;
}

const notFound = () => new NotFoundError('Bulk action not found', 'RUN_ACTION_NOT_FOUND');

function filterOf(body: RunActionBody): RunFilter {
  const f = body.filter;
  return {
    ...(f.run_ids !== undefined ? { runIds: f.run_ids } : {}),
    ...(f.workflow_id !== undefined ? { workflowId: f.workflow_id } : {}),
    ...(f.status !== undefined ? { statuses: f.status } : {}),
    ...(f.run_type !== undefined ? { runType: f.run_type } : {}),
    ...(f.started_after !== undefined ? { startedAfter: new Date(f.started_after) } : {}),
    ...(f.started_before !== undefined ? { startedBefore: new Date(f.started_before) } : {}),
    ...(f.error_contains !== undefined ? { errorContains: f.error_contains } : {}),
    // A rerun's node is where it starts, not a filter.
    ...(f.node_id !== undefined && body.action !== 'rerun' ? { pausedAt: f.node_id } : {}),
  };
}

const resultOf = (item: RunActionItemDoc) => ({
  run_id: item.run_id,
  outcome: item.outcome,
  new_run_id: item.new_run_id ?? null,
  error: item.error ?? null,
});

function answerOf(action: RunActionDoc, items: RunActionItemDoc[]): RunActionAnswer {
  return {
    id: action._id,
    action: action.action,
    matched: action.matched,
    status: action.status,
    done: action.done ?? 0,
    failed: action.failed ?? 0,
    created_at: action.created_at.toISOString(),
    ended_at: action.ended_at ? action.ended_at.toISOString() : null,
    results: items.map(resultOf),
  };
}

/** Refuses (403) a caller whose role lacks what the action needs; nothing is looked up before. */
function checkMayAct(caller: Caller, action: RunActionKind): void {
  const needs = ACTION_PERMISSIONS[action];
  if (!callerAllows(caller, needs))
    throw new ForbiddenError(`A bulk ${action} needs the permission '${needs}', which your role does not hold`);
}

/**
 * Bulk actions over runs: the matches are fixed when the action is made (one item per run, at most
 * `limit`), then a durable workflow (`spurRunAction`) acts on them page by page at the configured
 * rate. Everything reads and writes the caller's workspace only (the runs' and the actions'
 * collections are workspace-owned).
 */
export function createRunActionService(deps: RunActionServiceDeps) {
  const actions = createRunActions(deps.models);
  const matches = createRunMatches(deps.models);
  const handle = (id: string) =>
    deps.temporal.workflow.getHandle(runActionWorkflowId(id, deps.config.workflowIdPrefix));

  async function start(action: RunActionDoc): Promise<void> {
    try {
      await startRunActionWorkflow(deps.temporal.workflow, action, { ...deps.config, rate: deps.rate });
    } catch (err) {
      // Nothing was acted on: the action says so, and the client may send it again.
      await actions.finish(action._id, 'FAILED');
      throw new SpurError(
        'unavailable',
        'TEMPORAL_UNAVAILABLE',
        `Could not start the bulk action on Temporal: ${(err as Error).message}`,
      );
    }
  }

  /** Who decides the pauses of an approve or decline: the caller, as a pause action by them would name them. */
  function deciderOf(caller: Caller) {
    return deps.deciders.ofRequest(caller, actsForOperator(caller) ? starterName(caller) : (caller.userId as string));
  }

  async function get(actionId: string, page: Page): Promise<RunActionAnswer> {
    const action = await actions.get(actionId);
    if (!action) throw notFound();
    const { skip, limit } = pageBounds(page);
    return answerOf(action, await actions.items(actionId, skip, limit));
  }

  return {
    async create(body: RunActionBody, caller: Caller, page: Page): Promise<RunActionAnswer> {
      checkMayAct(caller, body.action);
      const runIds = await matches.match(filterOf(body), body.limit);
      if (body.dry_run) {
        const { skip, limit } = pageBounds(page);
        return {
          id: null,
          action: body.action,
          matched: runIds.length,
          status: 'DRY_RUN',
          done: 0,
          failed: 0,
          created_at: null,
          ended_at: null,
          results: runIds
            .slice(skip, skip + limit)
            .map((run_id) => ({ run_id, outcome: 'pending' as const, new_run_id: null, error: null })),
        };
      }
      const decider = PAUSE_ACTION_OF[body.action] ? await deciderOf(caller) : null;
      const who = runCaller();
      const action = await actions.create({
        action: body.action,
        filter: body.filter,
        runIds,
        startedBy: who?.id ?? null,
        startedByName: who?.name ?? null,
        decider,
      });
      // Nothing matched: nothing to act on, no workflow to start.
      if (runIds.length === 0) await actions.finish(action._id, 'COMPLETED');
      // (Not RUNNING: the reconciler gave up on it while its matches were being stored.)
      else if (action.status === 'RUNNING') await start(action);
      return get(action._id, page);
    },

    get,

    /** Stops an action: its workflow ends after the run in hand; runs not reached stay `pending`. */
    async cancel(actionId: string, caller: Caller): Promise<RunActionAnswer> {
      const action = await actions.get(actionId);
      if (!action) throw notFound();
      checkMayAct(caller, action.action);
      if (action.status !== 'RUNNING')
        throw new ConflictError(`Bulk action ${actionId} has ended already (${action.status})`, 'RUN_ACTION_ENDED');
      try {
        await handle(actionId).cancel();
      } catch (err) {
        if (!(err instanceof WorkflowNotFoundError))
          throw new SpurError(
            'unavailable',
            'TEMPORAL_UNAVAILABLE',
            `Could not stop the bulk action: ${(err as Error).message}`,
          );
      }
      await actions.finish(actionId, 'CANCELED');
      return get(actionId, { page: 1, page_size: 10 });
    },
  };
}

export type RunActionService = ReturnType<typeof createRunActionService>;

import { requiredCaller } from '../../access/caller';
import { defineRoute, type MountableRoute } from '../../http/route';
import { RunActionIdParams, RunActionRequest, RunActionResponse, RunActionResultsQuery } from './run-actions.schemas';
import type { RunActionService } from './run-actions.service';

const tags = ['runs'];
const audit = { target: 'run_action' };

/**
 * Bulk actions over runs. The routes need `pause.decide` (an approver's bulk approve or decline);
 * cancel, retry and rerun need `run` as well, checked before anything is looked up (403).
 */
export function runActionRoutes(service: RunActionService): MountableRoute[] {
  return [
    defineRoute({
      method: 'post',
      path: '/runs/actions/',
      permission: 'pause.decide',
      audit: { ...audit, action: 'run_action.create' },
      summary: 'Act on every run a filter matches: cancel, retry, rerun, approve or decline',
      description:
        "Answered at once: the matched runs (at most `limit`, oldest first) are fixed now, and a durable workflow acts on them at most SPUR_RUN_ACTION_RATE a second. cancel, retry and rerun need the permission `run`; approve and decline decide each run's open pause as the caller, whom its `approvers` must name (else that run fails, undecided). `dry_run`: the matches only, nothing stored or acted on. `page`/`page_size` page `results`.",
      tags,
      query: RunActionResultsQuery,
      body: RunActionRequest,
      response: RunActionResponse,
      errors: [403],
      handler: ({ query, body }, ctx) => service.create(body, requiredCaller(ctx.state), query),
    }),
    defineRoute({
      method: 'get',
      path: '/runs/actions/{action_id}/',
      summary: "A bulk action's progress and one page of its runs' outcomes",
      tags,
      params: RunActionIdParams,
      query: RunActionResultsQuery,
      response: RunActionResponse,
      errors: [404],
      handler: ({ params, query }) => service.get(params.action_id, query),
    }),
    defineRoute({
      method: 'post',
      path: '/runs/actions/{action_id}/cancel/',
      permission: 'pause.decide',
      audit: { ...audit, action: 'run_action.cancel' },
      summary: 'Stop a bulk action: runs it has not reached stay as they are (their outcome pending)',
      description: 'Needs what the action needs (`run` for cancel, retry and rerun). 409 once it has ended.',
      tags,
      params: RunActionIdParams,
      response: RunActionResponse,
      errors: [403, 404, 409],
      handler: ({ params }, ctx) => service.cancel(params.action_id, requiredCaller(ctx.state)),
    }),
  ];
}

import { noteAudit } from '../../access/audit-note';
import { z } from '../../zod';
import { callerOf } from '../../access/caller';
import { PageQuery, WHOLE_LIST_PAGE_MAX, WholeListQuery } from '../../http/pagination';
import { defineRoute, type MountableRoute } from '../../http/route';
import { RunIdParams } from '../runs/runs.schemas';
import { RunResponse } from '../../runs/response.schemas';
import type { PauseService } from './pauses.service';
import { type Idempotency, IdempotencyHeaders, REPLAY_RESPONSE_HEADERS } from '../runs/idempotency';
import { PauseHistoryResponse, PausedWorkflowResponse, ResumeRunRequest } from './pauses.schemas';

const tags = ['pauses'];

/** Registered before the workflow routes: `/wf/paused_workflows/` must not be read as a workflow id. */
export function pauseRoutes(pauses: PauseService, idempotency: Idempotency): MountableRoute[] {
  const cancel = ({ params }: { params: { run_id: string } }) => pauses.cancel(params.run_id);
  return [
    defineRoute({
      carriesValues: true,
      method: 'get',
      path: '/wf/paused_workflows/',
      summary: 'Runs waiting for a human, newest first',
      tags,
      query: PageQuery,
      response: z.array(PausedWorkflowResponse),
      handler: ({ query }) => pauses.paused(query),
    }),
    defineRoute({
      carriesValues: true,
      method: 'get',
      path: '/wf/pause_history/{run_id}/',
      summary: `A run's pauses, newest first, ${WHOLE_LIST_PAGE_MAX} per page unless page_size says fewer`,
      tags,
      params: RunIdParams,
      query: WholeListQuery,
      response: z.array(PauseHistoryResponse),
      errors: [404],
      handler: ({ params, query }) => pauses.history(params.run_id, query),
    }),
    defineRoute({
      carriesValues: true,
      method: 'post',
      path: '/wf/process_pause_action/{run_id}/',
      permission: 'pause.decide',
      audit: { action: 'pause.decide' },
      summary: 'Approve, decline or override a paused node',
      description:
        "A signed-in user decides as themself (`user_id`: their id, their username or the web UI's `current-user`; any other is 403); an operator's key names the decider. A node's `approvers` leave everyone else out (403, nothing decided).",
      tags,
      params: RunIdParams,
      body: ResumeRunRequest,
      headers: IdempotencyHeaders,
      response: RunResponse,
      responseHeaders: REPLAY_RESPONSE_HEADERS,
      errors: [400, 403, 404],
      handler: async ({ params, body }, ctx) => {
        // Which decision it is lies in the body: pause.approve, pause.decline or pause.override.
        noteAudit(ctx.state, {
          action: `pause.${body.action.toLowerCase()}`,
          target: { type: 'run', id: params.run_id },
        });
        const decider = await pauses.deciders.ofRequest(callerOf(ctx.state), body.user_id);
        return idempotency.keyed(ctx, {
          route: 'process_pause_action',
          target: params.run_id,
          request: body,
          existingRunId: params.run_id,
          perform: async (claim) => {
            // A keyed request may be the retry of one that applied its decision and then failed
            // (a 503 reading the run back released its key): it is answered as that decision's.
            const { status, run } = claim
              ? await pauses.actAgain(params.run_id, body, decider, claim.keyId)
              : await pauses.act(params.run_id, body, decider);
            ctx.status = status;
            return run;
          },
          recover: async (runId, keyId) => (await pauses.actAgain(runId, body, decider, keyId)).run,
        });
      },
    }),
    defineRoute({
      carriesValues: true,
      method: 'post',
      path: '/wf/cancel_workflow/{run_id}/',
      permission: 'run',
      audit: { action: 'run.cancel' },
      summary: 'Cancel a paused, running or pending run',
      tags,
      params: RunIdParams,
      response: RunResponse,
      errors: [400, 404],
      handler: cancel,
    }),
    defineRoute({
      carriesValues: true,
      method: 'post',
      path: '/cancel_workflow/{run_id}/',
      permission: 'run',
      audit: { action: 'run.cancel' },
      summary: 'Alias from the deployment guide',
      tags,
      params: RunIdParams,
      response: RunResponse,
      errors: [400, 404],
      handler: cancel,
    }),
  ];
}

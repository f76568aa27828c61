import { defineRoute, type MountableRoute } from '../../http/route';
import { PauseWorkflowRequest, PauseWorkflowResponse, ResumeWorkflowResponse } from './workflow-pause.schemas';
import type { WorkflowPauseService } from './workflow-pause.service';
import { WorkflowIdParams } from './workflows.schemas';

const tags = ['workflows'];

/** Beyond PySpur: an operator stops a workflow's runs from starting during an incident, and lets them start again. */
export function workflowPauseRoutes(service: WorkflowPauseService): MountableRoute[] {
  return [
    defineRoute({
      method: 'post',
      path: '/wf/{workflow_id}/pause/',
      permission: 'run',
      summary: 'Pause a workflow: no run of it starts until it is resumed (runs going on are left alone)',
      description:
        'Every start (run, runv2, start_run, start_batch_run, run_partial, rerun, MCP, chat completions, evals, a ' +
        "schedule's trigger) answers 409 naming the pause; schedule fires are skipped; webhook deliveries are held " +
        '(hold_webhooks, the default) or refused. A workflow already paused is 409.',
      tags,
      params: WorkflowIdParams,
      body: PauseWorkflowRequest,
      response: PauseWorkflowResponse,
      errors: [404, 409],
      handler: ({ params, body }) => service.pause(params.workflow_id, body),
    }),
    defineRoute({
      method: 'post',
      path: '/wf/{workflow_id}/resume/',
      permission: 'run',
      summary: 'Resume a paused workflow: its held webhook deliveries start, oldest first, then runs start again',
      description:
        'Answers once every held delivery has started. A workflow that is not paused (and holds nothing) is 409.',
      tags,
      params: WorkflowIdParams,
      response: ResumeWorkflowResponse,
      errors: [404, 409],
      handler: ({ params }) => service.resume(params.workflow_id),
    }),
  ];
}

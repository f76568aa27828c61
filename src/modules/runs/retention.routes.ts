import { z } from '../../zod';
import { defineRoute, type MountableRoute } from '../../http/route';
import { WorkflowIdParams } from '../workflows/workflows.schemas';
import type { WorkflowService } from '../workflows/workflows.service';
import type { RunEraser } from '../../runs/run-eraser';
import type { Retention } from '../../runs/retention';
import { RunIdParams } from './runs.schemas';

/** A century: past it a day count is a typo, and the cutoff it makes would leave the range of dates. */
const MAX_DAYS = 36_525;

const RetentionRequest = z
  .object({
    days: z.number().positive().max(MAX_DAYS).nullable().openapi({
      description:
        'Days a finished run is kept after it ended (fractions allowed); null: the installation’s SPUR_RUN_RETENTION_DAYS',
    }),
  })
  .strict();

const RetentionResponse = z
  .object({
    workflow_id: z.string(),
    days: z.number().nullable().openapi({ description: 'The workflow’s own retention; null: none set' }),
    effective_days: z.number().nullable().openapi({
      description: 'What applies to its runs: its own, else the installation’s; null: kept forever',
    }),
  })
  .openapi('RunRetention', {
    description:
      'How long a workflow’s finished runs are kept (beyond PySpur): a daily pass deletes each one, with everything it owns, that many days after it ended',
  });

const PruneResponse = z
  .object({
    deleted_runs: z.number().int().openapi({ description: 'Runs deleted (a batch’s rows count)' }),
    kept_active: z.number().int().openapi({
      description: 'Runs old enough to go that were kept because they have not ended (pending, running, paused)',
    }),
  })
  .openapi('RetentionPass');

export interface RetentionRouteDeps {
  workflows: WorkflowService;
  retention: Retention;
  eraser: RunEraser;
}

/** A workflow's run retention, deleting one finished run now, and the retention pass now. */
export function retentionRoutes({ workflows, retention, eraser }: RetentionRouteDeps): MountableRoute[] {
  const answer = async (workflowId: string) => {
    const days = await workflows.retentionOf(workflowId);
    return { workflow_id: workflowId, days, effective_days: days ?? retention.defaultDays };
  };
  return [
    defineRoute({
      method: 'get',
      path: '/wf/{workflow_id}/retention/',
      summary: 'How long the workflow’s finished runs are kept',
      tags: ['runs'],
      params: WorkflowIdParams,
      response: RetentionResponse,
      errors: [404],
      handler: ({ params }) => answer(params.workflow_id),
    }),
    defineRoute({
      method: 'put',
      path: '/wf/{workflow_id}/retention/',
      permission: 'build',
      audit: { action: 'retention.update' },
      summary: 'Set how long the workflow’s finished runs are kept (null: the installation’s default)',
      tags: ['runs'],
      params: WorkflowIdParams,
      body: RetentionRequest,
      response: RetentionResponse,
      errors: [404],
      handler: async ({ params, body }) => {
        await workflows.setRetention(params.workflow_id, body.days);
        return answer(params.workflow_id);
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/run/{run_id}/',
      permission: 'build',
      summary: 'Delete a finished run now, with everything it owns (a batch with its rows)',
      description:
        'Its tasks, events, pauses, stored values, output file, deliveries and idempotency keys go with it; its model usage stays counted in `/usage/`. 409 while it has not ended, for a batch’s row (deleted with its batch) and for an eval’s batch (deleted with its eval).',
      tags: ['runs'],
      params: RunIdParams,
      status: 204,
      response: null,
      errors: [404, 409],
      handler: async ({ params }) => {
        await eraser.eraseNow(params.run_id);
        return null;
      },
    }),
    defineRoute({
      method: 'post',
      path: '/runs/retention/prune/',
      permission: 'retention.prune',
      summary: 'Run the retention pass over the workspace now',
      description:
        'Deletes the workspace’s finished runs past their workflow’s retention, as the daily pass does, and answers what it did.',
      tags: ['runs'],
      response: PruneResponse,
      handler: () => retention.pass(),
    }),
  ];
}

import { z } from '../../zod';
import { NotFoundError } from '../../errors';
import { defineRoute, type MountableRoute } from '../../http/route';
import { WorkflowIdParams } from '../workflows/workflows.schemas';
import type { Budgets } from '../../usage/budgets';

const tags = ['usage'];

const Usd = z.number().finite().positive().max(1_000_000);

const WorkflowBudgetSchema = z
  .object({
    per_run_usd: Usd.nullable().optional().openapi({ description: 'What one run’s model calls may cost' }),
    per_day_usd: Usd.nullable().optional().openapi({ description: 'What the workflow’s runs may cost per UTC day' }),
    per_month_usd: Usd.nullable().optional().openapi({
      description: 'What the workflow’s runs may cost per UTC calendar month',
    }),
    on_exceed: z.enum(['pause', 'fail']).openapi({
      description:
        '`pause`: the run pauses at the node before the call that would pass a budget, for a person to APPROVE (the call goes, once) or DECLINE (the node fails); `fail`: the node fails',
    }),
  })
  .strict()
  .refine((b) => b.per_run_usd ?? b.per_day_usd ?? b.per_month_usd, {
    message: 'Give at least one of per_run_usd, per_day_usd, per_month_usd',
  });

const BudgetResponse = z
  .object({
    workflow_id: z.string(),
    per_run_usd: z.number().nullable(),
    per_day_usd: z.number().nullable(),
    per_month_usd: z.number().nullable(),
    on_exceed: z.enum(['pause', 'fail']),
  })
  .openapi('WorkflowBudget', {
    description:
      'What a workflow’s model calls may cost (beyond PySpur): each call’s worst case (its prompt’s tokens plus its max output tokens, at the model’s price) is checked against what is left before it is made',
  });

const NANO = 1e9;

const BudgetStateResponse = BudgetResponse.extend({
  spent_today_usd: z
    .number()
    .openapi({ description: 'Spent by the workflow’s runs this UTC day, held calls at their worst case' }),
  spent_this_month_usd: z.number().openapi({ description: 'The same, this UTC calendar month' }),
}).openapi('WorkflowBudgetState');

/** A workflow's budget: GET, PUT (replace), DELETE; and every budget of the workspace with its spending. */
export function budgetRoutes(budgets: Budgets, workflowExists: (id: string) => Promise<boolean>): MountableRoute[] {
  const known = async (id: string) => {
    if (!(await workflowExists(id))) throw new NotFoundError('Workflow not found', 'WORKFLOW_NOT_FOUND');
  };
  const response = async (id: string) => {
    const budget = await budgets.get(id);
    if (!budget) throw new NotFoundError(`Workflow ${id} has no budget`, 'BUDGET_NOT_FOUND');
    return { workflow_id: id, ...budget };
  };
  return [
    defineRoute({
      method: 'get',
      path: '/usage/budgets/',
      summary: 'Every budget of the workspace and what its workflow has spent this day and month',
      tags,
      response: z.array(BudgetStateResponse),
      handler: async () =>
        (await budgets.overview()).map(({ workflowId, budget, dayNano, monthNano }) => ({
          workflow_id: workflowId,
          ...budget,
          spent_today_usd: dayNano / NANO,
          spent_this_month_usd: monthNano / NANO,
        })),
    }),
    defineRoute({
      method: 'get',
      path: '/wf/{workflow_id}/budget/',
      summary: 'The workflow’s budget for model calls',
      tags,
      params: WorkflowIdParams,
      response: BudgetResponse,
      errors: [404],
      handler: async ({ params }) => {
        await known(params.workflow_id);
        return response(params.workflow_id);
      },
    }),
    defineRoute({
      method: 'put',
      path: '/wf/{workflow_id}/budget/',
      permission: 'build',
      audit: { action: 'budget.update' },
      summary: 'Set the workflow’s budget for model calls (checked before each call from now on)',
      tags,
      params: WorkflowIdParams,
      body: WorkflowBudgetSchema,
      response: BudgetResponse,
      errors: [404],
      handler: async ({ params, body }) => {
        await known(params.workflow_id);
        await budgets.set(params.workflow_id, {
          per_run_usd: body.per_run_usd ?? null,
          per_day_usd: body.per_day_usd ?? null,
          per_month_usd: body.per_month_usd ?? null,
          on_exceed: body.on_exceed,
        });
        return response(params.workflow_id);
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/wf/{workflow_id}/budget/',
      permission: 'build',
      audit: { action: 'budget.delete' },
      summary: 'Remove the workflow’s budget',
      tags,
      params: WorkflowIdParams,
      status: 204,
      response: null,
      errors: [404],
      handler: async ({ params }) => {
        await known(params.workflow_id);
        if (!(await budgets.remove(params.workflow_id)))
          throw new NotFoundError(`Workflow ${params.workflow_id} has no budget`, 'BUDGET_NOT_FOUND');
        return null;
      },
    }),
  ];
}

// The workflow side of workspace scoping: every activity a workflow schedules carries the
// workflow's SpurWorkspace, so the worker runs it inside that workspace
// (temporal/workspace-activities.ts), and every child it starts carries the same SpurWorkspace.
import {
  type ActivityInput,
  defaultPayloadConverter,
  type WorkflowInterceptorsFactory,
  workflowInfo,
} from '@temporalio/workflow';

type Headers = ActivityInput['headers'];
import { SpurWorkspace, WORKSPACE_HEADER } from '../../src/contracts/search-attributes';

const workspaceOf = () => workflowInfo().typedSearchAttributes.get(SpurWorkspace);

function withWorkspace(headers: Headers): Headers {
  const workspace = workspaceOf();
  return workspace ? { ...headers, [WORKSPACE_HEADER]: defaultPayloadConverter.toPayload(workspace) } : headers;
}

export const interceptors: WorkflowInterceptorsFactory = () => ({
  outbound: [
    {
      scheduleActivity: (input, next) => next({ ...input, headers: withWorkspace(input.headers) }),
      scheduleLocalActivity: (input, next) => next({ ...input, headers: withWorkspace(input.headers) }),
      startChildWorkflowExecution: (input, next) => {
        const workspace = workspaceOf();
        const given = input.options.typedSearchAttributes;
        if (!workspace || !(given === undefined || Array.isArray(given))) return next(input);
        const pairs = (given ?? []).filter((p) => p.key.name !== SpurWorkspace.name);
        return next({
          ...input,
          options: { ...input.options, typedSearchAttributes: [...pairs, { key: SpurWorkspace, value: workspace }] },
        });
      },
    },
  ],
});

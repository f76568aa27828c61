import path from 'node:path';
import { defaultPayloadConverter } from '@temporalio/common';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { WORKSPACE_HEADER } from '../src/contracts/search-attributes';
import { WorkflowType } from '../src/contracts/workflow-names';
import { DEFAULT_WORKSPACE, workspaceScope } from '../src/db/workspace-scope';

/** The workflow-side interceptor module that puts the workspace on each activity (bundled with the workflows). */
export const WORKSPACE_WORKFLOW_INTERCEPTOR = path.join(__dirname, 'workflows', 'workspace-interceptor');

/** The fleet's own workflows: their activities look across every workspace (a stuck run anywhere, a provider's slots, an expired run). */
const FLEET_WORKFLOWS: ReadonlySet<string> = new Set([
  WorkflowType.spurReconcile,
  WorkflowType.spurModelLimit,
  WorkflowType.spurRetention,
]);

/**
 * Runs each activity inside the workspace of the workflow that scheduled it: everything it reads
 * or writes is that workspace's (src/db/workspace-owned.ts). A workflow started before workspaces
 * existed carries none and is the `default` workspace's, as everything of that time is; the
 * fleet's workflows run outside any.
 */
export const workspaceActivities: ActivityInterceptorsFactory = (ctx) => ({
  inbound: {
    execute(input, next) {
      if (FLEET_WORKFLOWS.has(ctx.info.workflowType ?? '')) return next(input);
      const header = input.headers[WORKSPACE_HEADER];
      const named = header ? defaultPayloadConverter.fromPayload<unknown>(header) : null;
      const workspace = typeof named === 'string' && named !== '' ? named : DEFAULT_WORKSPACE;
      return workspaceScope.run(workspace, () => next(input));
    },
  },
});

import { toVersionResponse } from '../../runs/response';
import type { Models, WorkflowVersionDoc } from '../../db/models';
import { type WorkflowVersions, createWorkflowVersions } from '../../db/workflow-versions';
import { notFound } from '../../errors';
import { type Page, pageBounds } from '../../db/paging';

/** The api's reads of versions, on the process's one cache of pinned versions (the kernel's) when given. */
export function createVersionService(models: Models, versions: WorkflowVersions = createWorkflowVersions(models)) {
  const { WorkflowVersion } = models;
  return {
    /** Every version of a deleted workflow. */
    removeAllOf: versions.removeAllOf,
    ensureVersion: versions.ensureVersion,
    byId: versions.byId,
    async list(workflowId: string, page: Page, workflowExists: (id: string) => Promise<boolean>) {
      if (!(await workflowExists(workflowId))) throw notFound.workflow();
      const { skip, limit } = pageBounds(page);
      const docs = await WorkflowVersion.find({ workflow_id: workflowId })
        .sort({ version: -1 })
        .skip(skip)
        .limit(limit)
        .lean<WorkflowVersionDoc[]>();
      return docs.map(toVersionResponse);
    },
  };
}

export type VersionService = ReturnType<typeof createVersionService>;

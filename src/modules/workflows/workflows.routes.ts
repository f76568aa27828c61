import { z } from '../../zod';
import type { TestFileService } from '../files/test-files.service';
import { PageQuery } from '../../http/pagination';
import { defineRoute, type MountableRoute } from '../../http/route';
import { StagedFileSchema, multipartUpload, type UploadLimits } from '../../http/uploads';
import {
  WorkflowIdParams,
  workflowCreateRequest,
  WorkflowResponse,
  OutputVariable,
  UploadTestFilesForm,
  UploadTestFilesResponse,
} from './workflows.schemas';
import { WorkflowVersionResponse } from '../../runs/response.schemas';
import type { WorkflowService } from './workflows.service';
import type { VersionService } from './versions.service';
import type { DefinitionLimits } from '../../config/settings';

export interface WorkflowRouteDeps {
  workflows: WorkflowService;
  versions: VersionService;
  testFiles: TestFileService;
  uploadLimits: UploadLimits;
  /** SPUR_AGENT_MAX_ITERATIONS and SPUR_LOOP_MAX_TOTAL_ITERATIONS: definitions over them are not saved. */
  definitionLimits: DefinitionLimits;
  /** Runs go with their workflow (PySpur's cascade), stored values included. */
  runRecords: { removeOfWorkflow(workflowId: string): Promise<void> };
  /** Cancels the workflow's open runs and answers once they have stopped (runs/workflow-runs-stop.ts). */
  stopOpenRunsOf(workflowId: string): Promise<void>;
  /** What else a workflow owns, removed first: its schedules and webhook triggers (nothing starts a run after the answer). */
  dependents: ReadonlyArray<{ removeOfWorkflow(workflowId: string): Promise<void> }>;
}

const tags = ['workflows'];

export function workflowRoutes({
  workflows,
  versions,
  testFiles,
  uploadLimits,
  definitionLimits,
  runRecords,
  stopOpenRunsOf,
  dependents,
}: WorkflowRouteDeps): MountableRoute[] {
  const WorkflowCreateRequest = workflowCreateRequest(definitionLimits);
  return [
    defineRoute({
      method: 'post',
      path: '/wf/',
      permission: 'build',
      summary: 'Create a workflow',
      tags,
      body: WorkflowCreateRequest,
      response: WorkflowResponse,
      handler: ({ body }) => workflows.create(body),
    }),
    defineRoute({
      method: 'get',
      path: '/wf/',
      summary: 'List workflows, newest first',
      tags,
      query: PageQuery,
      response: z.array(WorkflowResponse),
      handler: ({ query }) => workflows.list(query),
    }),
    defineRoute({
      method: 'post',
      path: '/wf/upload_test_files/',
      permission: 'build',
      audit: { action: 'test_files.upload' },
      summary: 'Upload test files for a node',
      tags,
      bodyType: 'multipart/form-data',
      middleware: [multipartUpload('files', uploadLimits, testFiles.staging)],
      body: UploadTestFilesForm.extend({ files: z.array(StagedFileSchema).min(1) }),
      response: UploadTestFilesResponse,
      errors: [404, 413],
      handler: async ({ body }) => {
        await workflows.load(body.workflow_id);
        return { [body.node_id]: await testFiles.upload(body.workflow_id, body.node_id, body.files) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/wf/{workflow_id}/',
      summary: 'Get a workflow',
      tags,
      params: WorkflowIdParams,
      response: WorkflowResponse,
      errors: [404],
      handler: ({ params }) => workflows.get(params.workflow_id),
    }),
    defineRoute({
      method: 'put',
      path: '/wf/{workflow_id}/',
      permission: 'build',
      summary: 'Replace name, description and definition',
      tags,
      params: WorkflowIdParams,
      body: WorkflowCreateRequest,
      response: WorkflowResponse,
      errors: [400, 404, 409],
      handler: ({ params, body }) => workflows.update(params.workflow_id, body),
    }),
    defineRoute({
      method: 'delete',
      path: '/wf/{workflow_id}/',
      permission: 'build',
      summary: 'Delete a workflow, its versions, runs (open ones cancelled first), test files and webhook triggers',
      tags,
      params: WorkflowIdParams,
      status: 204,
      response: null,
      errors: [404, 409, 503],
      handler: async ({ params }) => {
        await workflows.remove(params.workflow_id, async (id) => {
          for (const dependent of dependents) await dependent.removeOfWorkflow(id);
          // Nothing starts a run of it now; the open ones stop before their records go.
          await stopOpenRunsOf(id);
          await testFiles.removeForWorkflow(id);
          await runRecords.removeOfWorkflow(id);
        });
      },
    }),
    defineRoute({
      method: 'put',
      path: '/wf/{workflow_id}/reset/',
      permission: 'build',
      summary: 'Reset to the default single-input definition',
      tags,
      params: WorkflowIdParams,
      response: WorkflowResponse,
      errors: [404],
      handler: ({ params }) => workflows.reset(params.workflow_id),
    }),
    defineRoute({
      method: 'post',
      path: '/wf/{workflow_id}/duplicate/',
      permission: 'build',
      summary: "Copy a workflow as '<name> (Copy)'",
      tags,
      params: WorkflowIdParams,
      response: WorkflowResponse,
      errors: [404],
      handler: ({ params }) => workflows.duplicate(params.workflow_id),
    }),
    defineRoute({
      method: 'get',
      path: '/wf/{workflow_id}/output_variables/',
      summary: 'Output fields of the leaf nodes',
      tags,
      params: WorkflowIdParams,
      response: z.array(OutputVariable),
      errors: [404],
      handler: ({ params }) => workflows.outputVariables(params.workflow_id),
    }),
    defineRoute({
      method: 'get',
      path: '/wf/{workflow_id}/versions/',
      summary: 'Versions, newest first',
      tags,
      params: WorkflowIdParams,
      query: PageQuery,
      response: z.array(WorkflowVersionResponse),
      errors: [404],
      handler: ({ params, query }) => versions.list(params.workflow_id, query, workflows.exists),
    }),
  ];
}

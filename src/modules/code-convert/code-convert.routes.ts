import { DefinitionStructureSchema, WorkflowDefinitionSchema } from '../../definitions/definition.schema';
import { defineRoute, type MountableRoute } from '../../http/route';
import { WorkflowResponse } from '../workflows/workflows.schemas';
import {
  CodeLayoutQuery,
  CodeWorkflowIdParams,
  WorkflowCodeRequest,
  WorkflowCodeResponse,
} from './code-convert.schemas';
import type { CodeConvertService } from './code-convert.service';

const tags = ['workflow code'];
const RAN_IN_SANDBOX =
  "The code runs in a worker's Python sandbox (no network, no secrets, time and memory limits), never in the api. " +
  'Code over 256 KiB is a 413; a syntax error, an exception, code that builds no workflow, a workflow that is not ' +
  'valid or a limit reached is a 422 saying which (and where, for errors in the code).';

/** PySpur's workflow-as-code routes (`/code_convert/`), paths and shapes as PySpur has them. */
export function codeConvertRoutes(codes: CodeConvertService): MountableRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/code_convert/{workflow_id}',
      summary: "A stored workflow as Python code (PySpur's WorkflowBuilder)",
      tags,
      params: CodeWorkflowIdParams,
      query: CodeLayoutQuery,
      response: WorkflowCodeResponse,
      errors: [404],
      handler: async ({ params, query }) => ({ code: await codes.codeOf(params.workflow_id, query) }),
    }),
    defineRoute({
      method: 'post',
      path: '/code_convert/create_from_code',
      permission: 'build',
      summary: 'Create a workflow from Python code',
      description: RAN_IN_SANDBOX,
      tags,
      body: WorkflowCodeRequest,
      response: WorkflowResponse,
      errors: [400, 413],
      handler: ({ body }) => codes.create(body.code),
    }),
    defineRoute({
      method: 'put',
      path: '/code_convert/{workflow_id}',
      permission: 'build',
      summary: 'Replace a workflow from Python code, keeping the layout of the nodes it already had',
      description: RAN_IN_SANDBOX,
      tags,
      params: CodeWorkflowIdParams,
      body: WorkflowCodeRequest,
      response: WorkflowResponse,
      errors: [400, 404, 409, 413],
      handler: ({ params, body }) => codes.update(params.workflow_id, body.code),
    }),
    defineRoute({
      method: 'post',
      path: '/code_convert/code_to_definition',
      permission: 'build',
      summary: 'Python code to a workflow definition, not stored',
      description: RAN_IN_SANDBOX,
      tags,
      body: WorkflowCodeRequest,
      response: DefinitionStructureSchema,
      errors: [400, 413],
      handler: ({ body }) => codes.toDefinition(body.code, body.workflow_id),
    }),
    defineRoute({
      method: 'post',
      path: '/code_convert/definition_to_code',
      permission: 'build',
      summary: 'A workflow definition to Python code, not stored',
      tags,
      query: CodeLayoutQuery,
      body: WorkflowDefinitionSchema,
      response: WorkflowCodeResponse,
      handler: ({ query, body }) => ({ code: codes.definitionCode(body, query) }),
    }),
  ];
}

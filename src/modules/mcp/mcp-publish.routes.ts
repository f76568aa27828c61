import { z } from '../../zod';
import type { McpTools } from '../../db/mcp-tools';
import { ConflictError } from '../../errors';
import { defineRoute, type MountableRoute } from '../../http/route';
import { WorkflowIdParams } from '../workflows/workflows.schemas';
import type { WorkflowService } from '../workflows/workflows.service';

const tags = ['mcp'];

/** MCP tool names: what clients and model providers accept in a function name. */
const ToolName = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,64}$/, 'letters, digits, _ and -, at most 64')
  .openapi({ description: 'The tool’s name in tools/list (default: the workflow’s name, made a valid name)' });

const PublishRequest = z
  .object({
    enabled: z.boolean().openapi({ description: 'Listed and callable by MCP clients when true' }),
    tool_name: ToolName.optional(),
    description: z.string().max(2000).optional().openapi({
      description: 'What the tool does, for the model that picks it (default: the workflow’s description)',
    }),
  })
  .strict();

const PublishResponse = z
  .object({
    workflow_id: z.string(),
    enabled: z.boolean(),
    tool_name: z.string().nullable(),
    description: z.string().nullable(),
  })
  .openapi('McpPublication', {
    description: 'Whether a workflow is a tool of Spur’s MCP server (`POST /api/mcp`), and under which name',
  });

/** A workflow's name as a tool name: what a function name may not hold replaced. */
export function defaultToolName(workflowName: string): string {
  return workflowName.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64) || 'workflow';
}

/** GET and PUT `/wf/{workflow_id}/mcp/`: publishing a workflow as an MCP tool. */
export function mcpPublishRoutes(tools: McpTools, workflows: WorkflowService): MountableRoute[] {
  const answer = async (workflowId: string) => {
    const publication = await tools.get(workflowId);
    return {
      workflow_id: workflowId,
      enabled: publication !== null,
      tool_name: publication?.tool_name ?? null,
      description: publication?.description ?? null,
    };
  };
  return [
    defineRoute({
      method: 'get',
      path: '/wf/{workflow_id}/mcp/',
      summary: 'Whether the workflow is published as an MCP tool',
      tags,
      params: WorkflowIdParams,
      response: PublishResponse,
      errors: [404],
      handler: async ({ params }) => {
        await workflows.load(params.workflow_id);
        return answer(params.workflow_id);
      },
    }),
    defineRoute({
      method: 'put',
      path: '/wf/{workflow_id}/mcp/',
      permission: 'build',
      audit: { action: 'mcp_tool.update' },
      summary: 'Publish the workflow as an MCP tool, or withdraw it (tools/list shows the change at once)',
      tags,
      params: WorkflowIdParams,
      body: PublishRequest,
      response: PublishResponse,
      errors: [404, 409],
      handler: async ({ params, body }) => {
        const workflow = await workflows.load(params.workflow_id);
        if (!body.enabled) await tools.unpublish(workflow._id);
        else {
          const name = body.tool_name ?? defaultToolName(workflow.name);
          if (!(await tools.publish(workflow._id, name, body.description ?? null)))
            throw new ConflictError(`Another workflow is published as the MCP tool '${name}'`, 'MCP_TOOL_NAME_TAKEN');
        }
        return answer(workflow._id);
      },
    }),
  ];
}

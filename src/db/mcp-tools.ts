import type { Models } from './models';
import { isDuplicateKeyError } from './ids';

/** A workflow as a tool of Spur's MCP server. */
export interface McpPublication {
  workflow_id: string;
  tool_name: string;
  description: string | null;
}

/** At most this many published workflows are listed: a tools/list answer stays bounded. */
export const MAX_PUBLISHED_TOOLS = 1000;

/**
 * The one writer of `mcp_tools`: which workflows the MCP server offers, under which names. Read
 * at every tools/list and tools/call, so a change shows on every api at once, without a restart.
 */
export function createMcpTools(models: Models, clock: () => Date = () => new Date()) {
  const { McpTool } = models;
  const publication = (doc: { _id: string; tool_name: string; description?: string | null }): McpPublication => ({
    workflow_id: doc._id,
    tool_name: doc.tool_name,
    description: doc.description ?? null,
  });
  return {
    async get(workflowId: string): Promise<McpPublication | null> {
      const doc = await McpTool.findById(workflowId).lean();
      return doc ? publication(doc) : null;
    },
    async byToolName(toolName: string): Promise<McpPublication | null> {
      const doc = await McpTool.findOne({ tool_name: toolName }).lean();
      return doc ? publication(doc) : null;
    },
    async list(): Promise<McpPublication[]> {
      const docs = await McpTool.find().sort({ tool_name: 1 }).limit(MAX_PUBLISHED_TOOLS).lean();
      return docs.map(publication);
    },
    /** False when another workflow is published under `tool_name`. */
    async publish(workflowId: string, toolName: string, description: string | null): Promise<boolean> {
      try {
        await McpTool.replaceOne(
          { _id: workflowId },
          { tool_name: toolName, description, updated_at: clock() },
          { upsert: true },
        );
        return true;
      } catch (err) {
        if (isDuplicateKeyError(err)) return false;
        throw err;
      }
    },
    async unpublish(workflowId: string): Promise<void> {
      await McpTool.deleteOne({ _id: workflowId });
    },
    /** A deleted workflow is no tool. */
    async removeOfWorkflow(workflowId: string): Promise<void> {
      await McpTool.deleteOne({ _id: workflowId });
    },
  };
}

export type McpTools = ReturnType<typeof createMcpTools>;

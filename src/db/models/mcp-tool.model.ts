import type { WorkspaceOwnedFields } from '../workspace-owned';
import { Schema, type InferSchemaType } from 'mongoose';

/**
 * A workflow published as a tool of Spur's MCP server (`_id`: the workflow id). Unpublished
 * workflows have no document; `tool_name` is unique, as tools/list names must be.
 */
export const mcpToolSchema = new Schema(
  {
    _id: { type: String, required: true },
    tool_name: { type: String, required: true },
    description: { type: String, required: false, default: null },
    updated_at: { type: Date, required: true },
  },
  { collection: 'mcp_tools', versionKey: false },
);
/** Unique within a workspace: another workspace may use the same tool name. */
mcpToolSchema.index({ workspace_id: 1, tool_name: 1 }, { unique: true });

export type McpToolDoc = InferSchemaType<typeof mcpToolSchema> & { _id: string } & WorkspaceOwnedFields;

import { Schema, type InferSchemaType } from 'mongoose';

/**
 * A user's role in a workspace other than `default` (`/api/access/workspaces/{id}/members/`):
 * `_id` is `<workspace>:<user>`. A user's role in `default` is their user record's `role`.
 */
export const workspaceMemberSchema = new Schema(
  {
    _id: { type: String, required: true },
    workspace_id: { type: String, required: true, index: true },
    user_id: { type: String, required: true, index: true },
    role: { type: String, required: true },
    created_at: { type: Date, required: true },
  },
  { collection: 'workspace_members', versionKey: false },
);

export type WorkspaceMemberDoc = InferSchemaType<typeof workspaceMemberSchema> & { _id: string };

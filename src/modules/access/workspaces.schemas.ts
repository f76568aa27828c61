import { z } from '../../zod';
import { USER_ID_PATTERN } from '../../contracts/roles';
import { RoleName, WorkspaceId } from './access.schemas';

export const WorkspaceIdParams = z.object({ id: WorkspaceId });

const WorkspaceName = z
  .string()
  .min(1)
  .max(100)
  .regex(/^\S(.*\S)?$/, 'no leading or trailing spaces');

export const WorkspaceCreateRequest = z.strictObject({ name: WorkspaceName }).openapi('WorkspaceCreateRequest');
export const WorkspaceUpdateRequest = z.strictObject({ name: WorkspaceName }).openapi('WorkspaceUpdateRequest');

export const WorkspaceResponse = z
  .object({
    id: z.string().openapi({ description: '`default`, or WS<n>' }),
    name: z.string(),
    created_at: z.iso.datetime(),
  })
  .openapi('Workspace');
export type WorkspaceResponse = z.output<typeof WorkspaceResponse>;

export const WorkspaceMemberParams = z.object({
  id: WorkspaceId,
  user_id: z.string().regex(USER_ID_PATTERN, 'a user id (UA…)'),
});

export const WorkspaceMemberRequest = z.strictObject({ role: RoleName }).openapi('WorkspaceMemberRequest');

export const WorkspaceMemberResponse = z
  .object({
    user_id: z.string(),
    username: z.string(),
    role: RoleName.openapi({ description: "The user's role in this workspace" }),
  })
  .openapi('WorkspaceMember');
export type WorkspaceMemberResponse = z.output<typeof WorkspaceMemberResponse>;

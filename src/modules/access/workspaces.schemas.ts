import { z } from '../../zod';
import { WorkspaceId } from './access.schemas';

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

import { requiredCaller as caller } from '../../access/caller';
import { PageQuery } from '../../http/pagination';
import { defineRoute, type MountableRoute } from '../../http/route';
import { z } from '../../zod';
import {
  WorkspaceCreateRequest,
  WorkspaceIdParams,
  WorkspaceMemberParams,
  WorkspaceMemberRequest,
  WorkspaceMemberResponse,
  WorkspaceResponse,
  WorkspaceUpdateRequest,
} from './workspaces.schemas';
import type { WorkspaceService } from './workspaces.service';

const tags = ['access'];

/** Workspaces (beyond PySpur): admins make and remove them; everything else lives in one. */
export function workspaceRoutes(workspaces: WorkspaceService): MountableRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/access/workspaces/',
      permission: 'read',
      summary: 'Workspaces, oldest first: every one for an installation admin, else those you belong to',
      tags,
      query: PageQuery,
      response: z.array(WorkspaceResponse),
      handler: ({ query }, ctx) => workspaces.list(caller(ctx.state), query),
    }),
    defineRoute({
      method: 'post',
      path: '/access/workspaces/',
      permission: 'users.manage',
      summary: 'Create a workspace',
      tags,
      status: 201,
      body: WorkspaceCreateRequest,
      response: WorkspaceResponse,
      errors: [409],
      handler: ({ body }) => workspaces.create(body.name),
    }),
    defineRoute({
      method: 'get',
      path: '/access/workspaces/{id}/',
      permission: 'read',
      summary: 'A workspace',
      tags,
      params: WorkspaceIdParams,
      response: WorkspaceResponse,
      errors: [404],
      handler: ({ params }, ctx) => workspaces.get(caller(ctx.state), params.id),
    }),
    defineRoute({
      method: 'put',
      path: '/access/workspaces/{id}/',
      permission: 'users.manage',
      summary: 'Rename a workspace',
      tags,
      params: WorkspaceIdParams,
      body: WorkspaceUpdateRequest,
      response: WorkspaceResponse,
      errors: [404, 409],
      handler: ({ params, body }) => workspaces.rename(params.id, body.name),
    }),
    defineRoute({
      method: 'delete',
      path: '/access/workspaces/{id}/',
      permission: 'users.manage',
      summary: 'Delete an empty workspace (409 naming what it still holds)',
      tags,
      params: WorkspaceIdParams,
      status: 204,
      response: null,
      errors: [404, 409],
      handler: ({ params }) => workspaces.remove(params.id),
    }),
    defineRoute({
      method: 'get',
      path: '/access/workspaces/{id}/members/',
      permission: 'members.manage',
      summary: "A workspace's members and their roles (an admin of it, acting in it, or an installation admin)",
      tags,
      params: WorkspaceIdParams,
      response: z.array(WorkspaceMemberResponse),
      errors: [404],
      handler: ({ params }, ctx) => workspaces.members(caller(ctx.state), params.id),
    }),
    defineRoute({
      method: 'put',
      path: '/access/workspaces/{id}/members/{user_id}',
      permission: 'members.manage',
      summary: "Add a user to a workspace, or change their role in it (in `default`: the user's role)",
      tags,
      audit: { action: 'member.update', target: 'user' },
      params: WorkspaceMemberParams,
      body: WorkspaceMemberRequest,
      response: WorkspaceMemberResponse,
      errors: [404],
      handler: ({ params, body }, ctx) => workspaces.setMember(caller(ctx.state), params.id, params.user_id, body.role),
    }),
    defineRoute({
      method: 'delete',
      path: '/access/workspaces/{id}/members/{user_id}',
      permission: 'members.manage',
      summary: 'Take a user out of a workspace: their keys of it are revoked and their sessions in it refused at once',
      tags,
      audit: { action: 'member.delete', target: 'user' },
      params: WorkspaceMemberParams,
      status: 204,
      response: null,
      errors: [404],
      handler: ({ params }, ctx) => workspaces.removeMember(caller(ctx.state), params.id, params.user_id),
    }),
  ];
}

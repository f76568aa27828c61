import { PageQuery } from '../../http/pagination';
import { defineRoute, type MountableRoute } from '../../http/route';
import { z } from '../../zod';
import {
  WorkspaceCreateRequest,
  WorkspaceIdParams,
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
      summary: 'Workspaces, oldest first',
      tags,
      query: PageQuery,
      response: z.array(WorkspaceResponse),
      handler: ({ query }) => workspaces.list(query),
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
      handler: ({ params }) => workspaces.get(params.id),
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
  ];
}

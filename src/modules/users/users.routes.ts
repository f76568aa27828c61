import { defineRoute, type MountableRoute } from '../../http/route';
import {
  SkipLimitQuery,
  UserCreateRequest,
  UserIdParams,
  UserListResponse,
  UserResponse,
  UserUpdateRequest,
} from './users.schemas';
import type { UserService } from './users.service';

const tags = ['users'];

/** PySpur's `/user/` router: chat users for sessions. */
export function userRoutes(users: UserService): MountableRoute[] {
  return [
    defineRoute({
      method: 'post',
      path: '/user/',
      permission: 'build',
      summary: 'Create a user (an existing external_id answers with that user)',
      tags,
      body: UserCreateRequest,
      response: UserResponse,
      errors: [409],
      handler: ({ body }) => users.create(body),
    }),
    defineRoute({
      method: 'get',
      path: '/user/',
      summary: 'List users by id',
      tags,
      query: SkipLimitQuery,
      response: UserListResponse,
      handler: ({ query }) => users.list(query.skip, query.limit),
    }),
    defineRoute({
      method: 'get',
      path: '/user/{user_id}/',
      summary: 'Get a user',
      tags,
      params: UserIdParams,
      response: UserResponse,
      errors: [404],
      handler: ({ params }) => users.get(params.user_id),
    }),
    defineRoute({
      method: 'patch',
      path: '/user/{user_id}/',
      permission: 'build',
      summary: 'Change external_id and/or user_metadata',
      tags,
      params: UserIdParams,
      body: UserUpdateRequest,
      response: UserResponse,
      errors: [404, 409],
      handler: ({ params, body }) => users.update(params.user_id, body),
    }),
    defineRoute({
      method: 'delete',
      path: '/user/{user_id}/',
      permission: 'build',
      summary: 'Delete a user, its sessions and their messages',
      tags,
      params: UserIdParams,
      status: 204,
      response: null,
      errors: [404],
      handler: async ({ params }) => {
        await users.remove(params.user_id);
      },
    }),
  ];
}

import { callerOf, type Caller } from '../../access/caller';
import { PageQuery } from '../../http/pagination';
import { defineRoute, type MountableRoute } from '../../http/route';
import { z } from '../../zod';
import {
  AccessKeyCreateRequest,
  AccessKeyIdParams,
  AccessKeyResponse,
  AccessUserCreateRequest,
  AccessUserIdParams,
  AccessUserResponse,
  AccessUserUpdateRequest,
  MeResponse,
  NewAccessKeyResponse,
} from './access.schemas';
import type { AccessService } from './access.service';

const tags = ['access'];

/** The gate lets only identified callers reach these routes (none is `anyone`). */
function caller(state: unknown): Caller {
  const found = callerOf(state);
  if (!found) throw new Error('access route reached without a caller: the gate must identify every caller here');
  return found;
}

/** Users, API keys and who you are (beyond PySpur). */
export function accessRoutes(access: AccessService): MountableRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/access/me/',
      permission: 'self',
      summary: 'Who you are: your user, role, and how you signed in',
      tags,
      response: MeResponse,
      handler: (_input, ctx) => access.me(caller(ctx.state)),
    }),
    defineRoute({
      method: 'get',
      path: '/access/users/',
      permission: 'users.manage',
      summary: 'Users, oldest first',
      tags,
      query: PageQuery,
      response: z.array(AccessUserResponse),
      handler: ({ query }) => access.listUsers(query),
    }),
    defineRoute({
      method: 'post',
      path: '/access/users/',
      permission: 'users.manage',
      summary: 'Create a user (a password lets them sign in on the login page)',
      tags,
      status: 201,
      body: AccessUserCreateRequest,
      response: AccessUserResponse,
      errors: [409],
      handler: ({ body }) => access.createUser(body),
    }),
    defineRoute({
      method: 'get',
      path: '/access/users/{id}/',
      permission: 'users.manage',
      summary: 'A user',
      tags,
      params: AccessUserIdParams,
      response: AccessUserResponse,
      errors: [404],
      handler: ({ params }) => access.getUser(params.id),
    }),
    defineRoute({
      method: 'put',
      path: '/access/users/{id}/',
      permission: 'users.manage',
      summary: 'Change a user; disabling them ends their sessions and revokes their keys at once',
      tags,
      params: AccessUserIdParams,
      body: AccessUserUpdateRequest,
      response: AccessUserResponse,
      errors: [404, 409],
      handler: ({ params, body }) => access.updateUser(params.id, body),
    }),
    defineRoute({
      method: 'delete',
      path: '/access/users/{id}/',
      permission: 'users.manage',
      summary: 'Delete a user, their sessions and their keys',
      tags,
      status: 204,
      params: AccessUserIdParams,
      response: null,
      errors: [404],
      handler: ({ params }) => access.deleteUser(params.id),
    }),
    defineRoute({
      method: 'get',
      path: '/access/keys/',
      permission: 'self',
      summary: 'Your API keys (an admin sees every key); never a key itself',
      tags,
      response: z.array(AccessKeyResponse),
      handler: (_input, ctx) => access.listKeys(caller(ctx.state)),
    }),
    defineRoute({
      method: 'post',
      path: '/access/keys/',
      permission: 'self',
      summary: 'Make an API key: answered once, stored hashed; it acts as its user with at most its role',
      tags,
      status: 201,
      body: AccessKeyCreateRequest,
      response: NewAccessKeyResponse,
      errors: [403, 404, 409],
      handler: ({ body }, ctx) => access.createKey(caller(ctx.state), body),
    }),
    defineRoute({
      method: 'delete',
      path: '/access/keys/{id}/',
      permission: 'self',
      summary: 'Revoke a key (yours; an admin: any), refused at once everywhere',
      tags,
      status: 204,
      params: AccessKeyIdParams,
      response: null,
      errors: [404],
      handler: ({ params }, ctx) => access.deleteKey(caller(ctx.state), params.id),
    }),
  ];
}

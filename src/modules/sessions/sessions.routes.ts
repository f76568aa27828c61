import { defineRoute, type MountableRoute } from '../../http/route';
import {
  SessionCreateRequest,
  SessionIdParams,
  SessionListQuery,
  SessionListResponse,
  SessionResponse,
  TestSessionQuery,
} from './sessions.schemas';
import type { SessionService } from './sessions.service';

const tags = ['sessions'];

/** PySpur's `/session/` router: chat sessions and their messages. */
export function sessionRoutes(sessions: SessionService): MountableRoute[] {
  return [
    defineRoute({
      method: 'post',
      path: '/session/',
      permission: 'build',
      summary: 'Create a session of a user with a workflow (an existing external_id answers with that session)',
      tags,
      body: SessionCreateRequest,
      response: SessionResponse,
      errors: [404],
      handler: ({ body }) => sessions.create(body),
    }),
    defineRoute({
      method: 'get',
      path: '/session/',
      summary: 'List sessions, newest first, with their messages',
      tags,
      query: SessionListQuery,
      response: SessionListResponse,
      handler: ({ query }) => sessions.list(query),
    }),
    defineRoute({
      method: 'post',
      path: '/session/test/',
      permission: 'build',
      summary: "The chat panel's session: the test user's empty session with the workflow, else a new one",
      tags,
      query: TestSessionQuery,
      response: SessionResponse,
      errors: [404],
      handler: ({ query }) => sessions.createTest(query.workflow_id),
    }),
    defineRoute({
      method: 'get',
      path: '/session/{session_id}/',
      summary: 'A session with its messages in run order',
      tags,
      params: SessionIdParams,
      response: SessionResponse,
      errors: [404],
      handler: ({ params }) => sessions.get(params.session_id),
    }),
    defineRoute({
      method: 'delete',
      path: '/session/{session_id}/',
      permission: 'build',
      summary: 'Delete a session and its messages',
      tags,
      params: SessionIdParams,
      status: 204,
      response: null,
      errors: [404],
      handler: async ({ params }) => {
        await sessions.remove(params.session_id);
      },
    }),
  ];
}

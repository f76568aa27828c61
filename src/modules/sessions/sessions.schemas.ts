import { z } from '../../zod';
import { SkipLimitQuery } from '../users/users.schemas';

export const SessionIdParams = z.object({ session_id: z.string().min(1).max(200) });

export const SessionCreateRequest = z.object({
  workflow_id: z.string().min(1).max(200),
  user_id: z.string().min(1).max(200),
  /** An existing session with this external_id is answered instead of a new one. */
  external_id: z.string().min(1).max(500).nullish(),
});
export type SessionCreateInput = z.output<typeof SessionCreateRequest>;

export const SessionListQuery = SkipLimitQuery.extend({
  user_id: z.string().max(200).optional(),
  /** Beyond PySpur: only this workflow's sessions. */
  workflow_id: z.string().max(200).optional(),
});
export type SessionListFilter = z.output<typeof SessionListQuery>;

export const TestSessionQuery = z.object({ workflow_id: z.string().min(1).max(200) });

export const MessageResponse = z
  .object({
    id: z.string(),
    session_id: z.string(),
    run_id: z.string().nullable(),
    content: z.record(z.string(), z.unknown()).openapi({ description: '`{role, content}`' }),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .openapi('MessageResponse');

export const SessionResponse = z
  .object({
    id: z.string(),
    workflow_id: z.string(),
    user_id: z.string(),
    external_id: z.string().nullable(),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
    messages: z.array(MessageResponse).openapi({ description: 'In run order; user message, then the answer' }),
  })
  .openapi('SessionResponse');
export type SessionResponse = z.output<typeof SessionResponse>;

export const SessionListResponse = z
  .object({ sessions: z.array(SessionResponse), total: z.number().int() })
  .openapi('SessionListResponse');

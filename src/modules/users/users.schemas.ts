import { z } from '../../zod';
import { queryInt } from '../../http/pagination';

const Metadata = z.record(z.string(), z.unknown());

export const UserIdParams = z.object({ user_id: z.string().min(1).max(200) });

export const UserCreateRequest = z.object({
  external_id: z.string().min(1).max(500),
  user_metadata: Metadata.default({}),
});
export type UserCreateInput = z.output<typeof UserCreateRequest>;

/** Only the fields sent change; `null` leaves a field as it is. */
export const UserUpdateRequest = z.object({
  external_id: z.string().min(1).max(500).nullish(),
  user_metadata: Metadata.nullish(),
});
export type UserUpdateInput = z.output<typeof UserUpdateRequest>;

export const UserResponse = z
  .object({
    id: z.string().openapi({ description: 'Internal id with prefix (U1)' }),
    external_id: z.string(),
    user_metadata: Metadata,
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .openapi('UserResponse');
export type UserResponse = z.output<typeof UserResponse>;

export const UserListResponse = z
  .object({ users: z.array(UserResponse), total: z.number().int() })
  .openapi('UserListResponse');

/** PySpur's paging for users and sessions: `skip` ≥ 0, 1 ≤ `limit` ≤ 100. */
export const SkipLimitQuery = z.object({
  skip: queryInt({ min: 0, default: 0 }),
  limit: queryInt({ min: 1, max: 100, default: 10 }),
});

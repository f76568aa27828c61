import assert from 'node:assert/strict';
import type { client } from './http';

type Http = ReturnType<typeof client>;

/** The roles, weakest first, as the access layer names them. */
export const ROLE_NAMES = ['viewer', 'approver', 'operator', 'builder', 'admin'] as const;
export type RoleName = (typeof ROLE_NAMES)[number];

export interface MadeUser {
  id: string;
  username: string;
  /** The role in `default`; null: no member of it. */
  role: RoleName | null;
}

export interface MadeKey {
  id: string;
  /** The key itself, as answered once. */
  key: string;
  user_id: string;
  role: RoleName;
  workspace_id: string;
}

/** A POST that must be answered 201: what it made. */
async function created<T>(http: Http, path: string, body: object, what: string): Promise<T> {
  const res = await http.post(path, body as Record<string, unknown>);
  assert.equal(res.status, 201, `making ${what}: ${res.text}`);
  return res.body as T;
}

/** `POST /access/users/` by `admin` (a client with an admin's key); fails the test unless answered 201. */
export const makeUser = (admin: Http, user: { username: string; role: RoleName | null; password?: string }) =>
  created<MadeUser>(admin, '/access/users/', user, `user ${user.username}`);

/** `POST /access/keys/` by `maker`; fails the test unless answered 201. */
export const makeKey = (
  maker: Http,
  key: { name: string; user_id?: string; role?: RoleName; expires_at?: string; workspace_id?: string },
) => created<MadeKey>(maker, '/access/keys/', key, `key ${key.name}`);

/** A user of `role` and a key of theirs (the key of the user's role). */
export async function userWithKey(
  admin: Http,
  username: string,
  role: RoleName,
  password?: string,
): Promise<{ user: MadeUser; key: MadeKey }> {
  const user = await makeUser(admin, { username, role, ...(password ? { password } : {}) });
  const key = await makeKey(admin, { name: `${username}'s key`, user_id: user.id });
  assert.equal(key.role, role, "a key made for a user takes the user's role");
  return { user, key };
}

/**
 * A user who belongs to `workspaceId` alone (no member of `default`), with `role` there, and a key
 * of theirs acting in it: made by an installation admin.
 */
export async function memberWithKey(
  admin: Http,
  workspaceId: string,
  username: string,
  role: RoleName,
): Promise<{ user: MadeUser; key: MadeKey }> {
  const user = await makeUser(admin, { username, role: null });
  const added = await admin.put(`/access/workspaces/${workspaceId}/members/${user.id}`, { role });
  assert.equal(added.status, 200, `adding ${username} to ${workspaceId}: ${added.text}`);
  const key = await makeKey(admin, { name: `${username}'s key`, user_id: user.id, workspace_id: workspaceId });
  assert.equal(key.role, role, "a key made for a member takes the member's role");
  return { user, key };
}

/** `Authorization` for a key. */
export const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

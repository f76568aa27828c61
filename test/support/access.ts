import assert from 'node:assert/strict';
import type { client } from './http';

type Http = ReturnType<typeof client>;

/** The roles, weakest first, as the access layer names them. */
export const ROLE_NAMES = ['viewer', 'approver', 'operator', 'builder', 'admin'] as const;
export type RoleName = (typeof ROLE_NAMES)[number];

export interface MadeUser {
  id: string;
  username: string;
  role: RoleName;
}

export interface MadeKey {
  id: string;
  /** The key itself, as answered once. */
  key: string;
  user_id: string;
  role: RoleName;
}

/** `POST /access/users/` by `admin` (a client with an admin's key); fails the test unless answered 201. */
export async function makeUser(
  admin: Http,
  user: { username: string; role: RoleName; password?: string },
): Promise<MadeUser> {
  const res = await admin.post('/access/users/', user);
  assert.equal(res.status, 201, `making user ${user.username}: ${res.text}`);
  return res.body as MadeUser;
}

/** `POST /access/keys/` by `maker`; fails the test unless answered 201. */
export async function makeKey(
  maker: Http,
  key: { name: string; user_id?: string; role?: RoleName; expires_at?: string },
): Promise<MadeKey> {
  const res = await maker.post('/access/keys/', key);
  assert.equal(res.status, 201, `making key ${key.name}: ${res.text}`);
  return res.body as MadeKey;
}

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

/** `Authorization` for a key. */
export const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

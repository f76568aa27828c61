import { randomBytes, createHash } from 'node:crypto';
import { actsForOperator, type Caller } from '../../access/caller';
import { hashPassword } from '../../access/passwords';
import { callerAllows, permissionsOf } from '../../access/permissions';
import { type Role, roleRank } from '../../contracts/roles';
import type { AccessKeyStore } from '../../db/access-keys';
import { type AccessUserChange, type AccessUserStore, UsernameTaken } from '../../db/access-users';
import type { BrowserSessionStore } from '../../db/browser-sessions';
import type { AccessKeyDoc, AccessUserDoc } from '../../db/models';
import type { WorkspaceStore } from '../../db/workspaces';
import type { WorkspaceMembers } from '../../db/workspace-members';
import { DEFAULT_WORKSPACE } from '../../db/workspace-scope';
import type { Page } from '../../db/paging';
import { BadRequestError, ConflictError, ForbiddenError, NotFoundError, RequestValidationError } from '../../errors';
import type {
  AccessKeyCreateInput,
  AccessKeyResponse,
  AccessUserCreateInput,
  AccessUserResponse,
  AccessUserUpdateInput,
} from './access.schemas';

/** Most workspaces `/access/me/` lists for an installation admin (every one it may switch to). */
const MAX_LISTED = 100;

const userNotFound = () => new NotFoundError('User not found', 'ACCESS_USER_NOT_FOUND');
const keyNotFound = () => new NotFoundError('Key not found', 'ACCESS_KEY_NOT_FOUND');
const taken = (name: string) => new ConflictError(`A user named '${name}' exists already`, 'USERNAME_TAKEN');

export function userResponse(doc: AccessUserDoc): AccessUserResponse {
  return {
    id: doc._id,
    username: doc.username,
    email: doc.email ?? null,
    display_name: doc.display_name ?? null,
    role: (doc.role as Role | null) ?? null,
    disabled: doc.disabled,
    has_password: typeof doc.password_hash === 'string',
    oidc: typeof doc.oidc_subject === 'string',
    created_at: doc.created_at.toISOString(),
    last_seen_at: doc.last_seen_at?.toISOString() ?? null,
  };
}

/** Other users' keys are the users manager's (permissions.ts: `users.manage`), whoever holds that. */
const managesUsers = (caller: Caller) => callerAllows(caller, 'users.manage');

function keyResponse(doc: AccessKeyDoc): AccessKeyResponse {
  return {
    id: doc._id,
    name: doc.name,
    user_id: doc.user_id,
    role: doc.role as Role,
    workspace_id: doc.workspace_id,
    expires_at: doc.expires_at?.toISOString() ?? null,
    created_at: doc.created_at.toISOString(),
    last_used_at: doc.last_used_at?.toISOString() ?? null,
  };
}

/** A new key: `spur_` and 256 random bits; only its SHA-256 is kept. */
function newKey(): { key: string; digest: string } {
  const key = `spur_${randomBytes(32).toString('base64url')}`;
  return { key, digest: createHash('sha256').update(key, 'utf8').digest('hex') };
}

export interface AccessDeps {
  users: AccessUserStore;
  keys: AccessKeyStore;
  sessions: BrowserSessionStore;
  workspaces: WorkspaceStore;
  members: WorkspaceMembers;
  clock?: () => Date;
}

/**
 * Users and their keys. Who may call what is the gate's (permissions.ts); what is left here are the
 * rules that depend on the caller and the thing: a key never outranks its maker, a user sees and
 * revokes only their own keys unless an admin, and disabling or deleting a user ends their sessions
 * and keys at once (every api process reads them per request).
 */
export function createAccessService({
  users,
  keys,
  sessions,
  workspaces,
  members,
  clock = () => new Date(),
}: AccessDeps) {
  async function loadUser(id: string): Promise<AccessUserDoc> {
    const doc = await users.get(id);
    if (!doc) throw userNotFound();
    return doc;
  }

  /** The workspaces the caller may act in, with its role in each: every one for an installation admin. */
  async function workspacesOf(caller: Caller, user: AccessUserDoc | null) {
    if (caller.installationAdmin || user === null) {
      const all = await workspaces.list({ page: 1, page_size: MAX_LISTED });
      return all.map((w) => ({ id: w._id, name: w.name, role: 'admin' as Role }));
    }
    const places = [
      ...(user.role ? [{ workspaceId: DEFAULT_WORKSPACE, role: user.role as Role }] : []),
      ...(await members.ofUser(user._id)),
    ];
    const named = await Promise.all(places.map(async (p) => ({ place: p, doc: await workspaces.get(p.workspaceId) })));
    return named.flatMap(({ place, doc }) => (doc ? [{ id: doc._id, name: doc.name, role: place.role }] : []));
  }

  async function cutOff(userId: string): Promise<void> {
    await Promise.all([sessions.removeForUser(userId), keys.removeForUser(userId)]);
  }

  return {
    async listUsers(page: Page): Promise<AccessUserResponse[]> {
      return (await users.list(page)).map(userResponse);
    },
    getUser: async (id: string) => userResponse(await loadUser(id)),
    async createUser(body: AccessUserCreateInput): Promise<AccessUserResponse> {
      try {
        const doc = await users.create({
          username: body.username,
          email: body.email ?? null,
          display_name: body.display_name ?? null,
          role: body.role,
          password_hash: body.password === undefined ? null : await hashPassword(body.password),
          oidc_subject: null,
        });
        return userResponse(doc);
      } catch (err) {
        if (err instanceof UsernameTaken) throw taken(body.username);
        throw err;
      }
    },
    async updateUser(id: string, body: AccessUserUpdateInput): Promise<AccessUserResponse> {
      await loadUser(id);
      const change: AccessUserChange = {};
      if (body.username !== undefined) change.username = body.username;
      if (body.email !== undefined) change.email = body.email;
      if (body.display_name !== undefined) change.display_name = body.display_name;
      if (body.role !== undefined) change.role = body.role;
      if (body.disabled !== undefined) change.disabled = body.disabled;
      if (body.password !== undefined)
        change.password_hash = body.password === null ? null : await hashPassword(body.password);
      let doc: AccessUserDoc | null;
      try {
        doc = await users.update(id, change);
      } catch (err) {
        if (err instanceof UsernameTaken) throw taken(body.username ?? id);
        throw err;
      }
      if (!doc) throw userNotFound();
      // A new password also ends the sessions signed in with the old one.
      if (body.disabled === true) await cutOff(id);
      else if (body.password !== undefined) await sessions.removeForUser(id);
      return userResponse(doc);
    },
    async deleteUser(id: string): Promise<void> {
      if (!(await users.remove(id))) throw userNotFound();
      await cutOff(id);
      await members.removeUser(id);
    },

    async listKeys(caller: Caller): Promise<AccessKeyResponse[]> {
      const all = managesUsers(caller);
      if (!all && caller.userId === null) return [];
      return (await keys.list(all ? null : caller.userId)).map(keyResponse);
    },
    async createKey(caller: Caller, body: AccessKeyCreateInput): Promise<AccessKeyResponse & { key: string }> {
      const forOther = body.user_id !== undefined && body.user_id !== caller.userId;
      if (forOther && !managesUsers(caller)) throw new ForbiddenError('Only an admin makes keys for another user');
      const userId = body.user_id ?? (actsForOperator(caller) ? null : caller.userId);
      if (userId === null)
        throw new RequestValidationError([
          {
            type: 'missing',
            loc: ['body', 'user_id'],
            msg: 'A configured key has no user: name the user_id the key is for',
            input: null,
          },
        ]);
      const owner = await users.get(userId);
      if (!owner) throw userNotFound();
      if (owner.disabled) throw new ConflictError(`User '${owner.username}' is disabled`, 'ACCESS_USER_DISABLED');
      const workspaceId = body.workspace_id ?? caller.workspaceId;
      if (workspaceId !== caller.workspaceId && !managesUsers(caller))
        throw new ForbiddenError('Only an admin makes keys for another workspace');
      if (!(await workspaces.get(workspaceId))) throw new NotFoundError('Workspace not found', 'WORKSPACE_NOT_FOUND');
      // The user's role where the key will act: a key of a workspace its user is no member of would act as no one.
      const ownerRole = await members.roleOf(owner, workspaceId);
      if (ownerRole === null)
        throw new ConflictError(
          `User '${owner.username}' is no member of workspace ${workspaceId}: add them first`,
          'ACCESS_USER_NOT_MEMBER',
        );
      // A key never outranks the one who makes it, nor the user it acts as.
      const role = body.role ?? (forOther || actsForOperator(caller) ? ownerRole : caller.role);
      if (roleRank(role) > roleRank(caller.role))
        throw new ForbiddenError(`A key's role is at most your own (${caller.role})`);
      if (roleRank(role) > roleRank(ownerRole))
        throw new BadRequestError(`A key's role is at most its user's in the workspace (${ownerRole})`);
      const expiresAt = body.expires_at === undefined ? null : new Date(body.expires_at);
      if (expiresAt !== null && expiresAt <= clock())
        throw new RequestValidationError([
          {
            type: 'value_error',
            loc: ['body', 'expires_at'],
            msg: 'expires_at is in the past',
            input: body.expires_at,
          },
        ]);
      const { key, digest } = newKey();
      const doc = await keys.create({
        digest,
        user_id: userId,
        name: body.name,
        role,
        expires_at: expiresAt,
        workspace_id: workspaceId,
      });
      return { ...keyResponse(doc), key };
    },
    async deleteKey(caller: Caller, id: string): Promise<void> {
      const doc = await keys.get(id);
      // Another user's key does not exist for a non-admin: no hint that the id is taken.
      if (!doc || (!managesUsers(caller) && doc.user_id !== caller.userId)) throw keyNotFound();
      await keys.remove(id);
    },

    async me(caller: Caller) {
      const user = caller.userId !== null && caller.via !== 'local' ? await users.get(caller.userId) : null;
      return {
        user: user ? userResponse(user) : null,
        username: caller.username,
        role: caller.role,
        via: caller.via,
        key_id: caller.keyId,
        workspace_id: caller.workspaceId,
        workspaces: await workspacesOf(caller, user),
        permissions: permissionsOf(caller),
      };
    },

    /** A signed-in user's session moves to another workspace of theirs; a key (and a session signed in with one) stays where it acts. */
    async switchWorkspace(caller: Caller, workspaceId: string) {
      if (caller.sessionId === null || caller.userId === null)
        throw new ConflictError(
          'Only a browser session signed in as a user switches workspace: a key acts in its own',
          'WORKSPACE_FIXED',
        );
      const user = await loadUser(caller.userId);
      const known = await workspaces.get(workspaceId);
      // Another workspace the user is no member of does not exist for them.
      if (!known || (await members.roleOf(user, workspaceId)) === null)
        throw new NotFoundError('Workspace not found', 'WORKSPACE_NOT_FOUND');
      await sessions.switchWorkspace(caller.sessionId, workspaceId);
      return this.me({ ...caller, workspaceId, role: (await members.roleOf(user, workspaceId)) as Role });
    },
  };
}

export type AccessService = ReturnType<typeof createAccessService>;

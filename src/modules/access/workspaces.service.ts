import type { Caller } from '../../access/caller';
import type { Role } from '../../contracts/roles';
import type { AccessKeyStore } from '../../db/access-keys';
import type { AccessUserStore } from '../../db/access-users';
import type { Models, WorkspaceDoc } from '../../db/models';
import type { WorkspaceMembers } from '../../db/workspace-members';
import type { Page } from '../../db/paging';
import { DEFAULT_WORKSPACE, workspaceScope } from '../../db/workspace-scope';
import { type WorkspaceStore, WorkspaceNameTaken, workspaceModels } from '../../db/workspaces';
import { ConflictError, NotFoundError } from '../../errors';
import type { WorkspaceMemberResponse, WorkspaceResponse } from './workspaces.schemas';

const notFound = () => new NotFoundError('Workspace not found', 'WORKSPACE_NOT_FOUND');
const taken = (name: string) => new ConflictError(`A workspace named '${name}' exists already`, 'WORKSPACE_NAME_TAKEN');

const responseOf = (doc: WorkspaceDoc): WorkspaceResponse => ({
  id: doc._id,
  name: doc.name,
  created_at: doc.created_at.toISOString(),
});

export interface WorkspaceServiceDeps {
  models: Models;
  store: WorkspaceStore;
  members: WorkspaceMembers;
  users: AccessUserStore;
  keys: AccessKeyStore;
}

const userNotFound = () => new NotFoundError('User not found', 'ACCESS_USER_NOT_FOUND');
const memberNotFound = () => new NotFoundError('Not a member of the workspace', 'WORKSPACE_MEMBER_NOT_FOUND');

/**
 * Workspaces: a team's share of the installation, which nothing of another team's reaches. An
 * installation admin sees and manages all; anyone else sees the workspaces they belong to, and a
 * workspace's admin manages its members, in it.
 */
export function createWorkspaceService({ models, store, members, users, keys }: WorkspaceServiceDeps) {
  /** The workspace ids the caller belongs to; null: every one (an installation admin). */
  async function visibleTo(caller: Caller): Promise<Set<string> | null> {
    if (caller.installationAdmin || caller.userId === null) return null;
    const user = await users.get(caller.userId);
    const ids = new Set((await members.ofUser(caller.userId)).map((m) => m.workspaceId));
    if (user?.role) ids.add(DEFAULT_WORKSPACE);
    return ids;
  }

  /** The workspace, when the caller may see it; another one does not exist for them. */
  async function seen(caller: Caller, id: string): Promise<WorkspaceDoc> {
    const visible = await visibleTo(caller);
    const doc = visible === null || visible.has(id) ? await store.get(id) : null;
    if (!doc) throw notFound();
    return doc;
  }

  /** A workspace admin manages the members of the workspace they act in; an installation admin, of any. */
  async function managed(caller: Caller, id: string): Promise<WorkspaceDoc> {
    if (!caller.installationAdmin && id !== caller.workspaceId) throw notFound();
    const doc = await store.get(id);
    if (!doc) throw notFound();
    return doc;
  }

  /** The collections that still hold something of the workspace, by name. */
  async function holdings(id: string): Promise<string[]> {
    const held = await workspaceScope.run(id, () =>
      Promise.all(
        workspaceModels(models).map(async (model) => ((await model.exists({})) ? model.collection.name : null)),
      ),
    );
    // Its keys too (a key of a workspace that is gone would act nowhere), and its provider limits.
    if (await models.AccessKey.exists({ workspace_id: id })) held.push(models.AccessKey.collection.name);
    if (await models.ProviderLimit.exists({ workspace_id: id })) held.push(models.ProviderLimit.collection.name);
    return held.filter((name): name is string => name !== null);
  }

  return {
    async list(caller: Caller, page: Page): Promise<WorkspaceResponse[]> {
      const visible = await visibleTo(caller);
      const all = visible === null ? await store.list(page) : await store.listOf([...visible], page);
      return all.map(responseOf);
    },
    get: async (caller: Caller, id: string) => responseOf(await seen(caller, id)),

    async members(caller: Caller, id: string): Promise<WorkspaceMemberResponse[]> {
      await managed(caller, id);
      const listed = await members.list(id);
      const named = await Promise.all(listed.map(async (m) => ({ m, user: await users.get(m.userId) })));
      return named.flatMap(({ m, user }) =>
        user ? [{ user_id: m.userId, username: user.username, role: m.role }] : [],
      );
    },
    async setMember(caller: Caller, id: string, userId: string, role: Role): Promise<WorkspaceMemberResponse> {
      await managed(caller, id);
      const user = await users.get(userId);
      if (!user) throw userNotFound();
      await members.set(id, userId, role);
      return { user_id: userId, username: user.username, role };
    },
    /** The member's keys of the workspace go with them: a key of a workspace its user left would act as no one. */
    async removeMember(caller: Caller, id: string, userId: string): Promise<void> {
      await managed(caller, id);
      if (!(await members.remove(id, userId))) throw memberNotFound();
      await keys.removeForUserIn(userId, id);
    },
    async create(name: string): Promise<WorkspaceResponse> {
      try {
        return responseOf(await store.create(name));
      } catch (err) {
        if (err instanceof WorkspaceNameTaken) throw taken(name);
        throw err;
      }
    },
    async rename(id: string, name: string): Promise<WorkspaceResponse> {
      try {
        const doc = await store.rename(id, name);
        if (!doc) throw notFound();
        return responseOf(doc);
      } catch (err) {
        if (err instanceof WorkspaceNameTaken) throw taken(name);
        throw err;
      }
    },
    /** Only an empty workspace goes, and never `default`: a key of it would act nowhere. */
    async remove(id: string): Promise<void> {
      if (!(await store.get(id))) throw notFound();
      if (id === DEFAULT_WORKSPACE)
        throw new ConflictError('The default workspace cannot be deleted', 'WORKSPACE_DEFAULT');
      const held = await holdings(id);
      if (held.length > 0)
        throw new ConflictError(
          `The workspace still holds ${held.join(', ')}: delete those first`,
          'WORKSPACE_NOT_EMPTY',
        );
      await store.remove(id);
      await members.removeWorkspace(id);
    },
  };
}

export type WorkspaceService = ReturnType<typeof createWorkspaceService>;

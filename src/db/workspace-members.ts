import { trusted } from 'mongoose';
import type { Role } from '../contracts/roles';
import type { AccessUserStore } from './access-users';
import type { AccessUserDoc, Models, WorkspaceMemberDoc } from './models';
import { DEFAULT_WORKSPACE } from './workspace-scope';

/** A user's place in a workspace. */
export interface Membership {
  workspaceId: string;
  userId: string;
  role: Role;
}

/** An admin of `default` administers the installation: users, workspaces, the fleet's limits, the audit trail. */
export const isInstallationAdmin = (user: Pick<AccessUserDoc, 'role'>): boolean => user.role === 'admin';

const memberId = (workspaceId: string, userId: string) => `${workspaceId}:${userId}`;

/**
 * Who belongs to which workspace, with which role: the only writer of `workspace_members`. A user's
 * role in `default` is their record's `role` (what it was before workspaces), so a single-team
 * installation has no membership documents at all.
 */
export function createWorkspaceMembers(models: Models, users: AccessUserStore) {
  const { WorkspaceMember, AccessUser } = models;

  return {
    /**
     * What the user may do in the workspace: an installation admin (admin of `default`) is admin in
     * every workspace; anyone else has their membership's role, or null (no member: nothing).
     */
    async roleOf(user: Pick<AccessUserDoc, '_id' | 'role'>, workspaceId: string): Promise<Role | null> {
      if (isInstallationAdmin(user)) return 'admin';
      return this.roleIn(user, workspaceId);
    },
    /** The user's role in the workspace as its members list shows it; null when they are no member of it. */
    async roleIn(user: Pick<AccessUserDoc, '_id' | 'role'>, workspaceId: string): Promise<Role | null> {
      if (workspaceId === DEFAULT_WORKSPACE) return (user.role as Role | null) ?? null;
      const doc = await WorkspaceMember.findById(memberId(workspaceId, user._id)).lean<WorkspaceMemberDoc>();
      return (doc?.role as Role | undefined) ?? null;
    },
    /** Every member of the workspace, oldest membership first. */
    async list(workspaceId: string): Promise<Membership[]> {
      if (workspaceId === DEFAULT_WORKSPACE) {
        const users = await AccessUser.find({ role: trusted({ $ne: null }) }, { role: 1 })
          .sort({ seq: 1 })
          .lean<Array<{ _id: string; role: string }>>();
        return users.map((u) => ({ workspaceId, userId: u._id, role: u.role as Role }));
      }
      const docs = await WorkspaceMember.find({ workspace_id: workspaceId })
        .sort({ created_at: 1 })
        .lean<WorkspaceMemberDoc[]>();
      return docs.map((d) => ({ workspaceId, userId: d.user_id, role: d.role as Role }));
    },
    /** Where a user's session acts until switched: `default` when they belong to it, else their first workspace. */
    async homeOf(user: Pick<AccessUserDoc, '_id' | 'role'>): Promise<string> {
      if (user.role || isInstallationAdmin(user)) return DEFAULT_WORKSPACE;
      const first = await WorkspaceMember.findOne({ user_id: user._id })
        .sort({ created_at: 1 })
        .lean<WorkspaceMemberDoc>();
      return first?.workspace_id ?? DEFAULT_WORKSPACE;
    },
    /** The workspaces other than `default` the user belongs to. */
    async ofUser(userId: string): Promise<Membership[]> {
      const docs = await WorkspaceMember.find({ user_id: userId }).sort({ created_at: 1 }).lean<WorkspaceMemberDoc[]>();
      return docs.map((d) => ({ workspaceId: d.workspace_id, userId, role: d.role as Role }));
    },
    async set(workspaceId: string, userId: string, role: Role): Promise<void> {
      if (workspaceId === DEFAULT_WORKSPACE) {
        await users.update(userId, { role });
        return;
      }
      await WorkspaceMember.updateOne(
        { _id: memberId(workspaceId, userId) },
        { $set: { role }, $setOnInsert: { workspace_id: workspaceId, user_id: userId, created_at: new Date() } },
        { upsert: true },
      );
    },
    /** False when the user was no member. */
    async remove(workspaceId: string, userId: string): Promise<boolean> {
      if (workspaceId === DEFAULT_WORKSPACE) {
        const user = await users.get(userId);
        if (!user?.role) return false;
        await users.update(userId, { role: null });
        return true;
      }
      return (await WorkspaceMember.deleteOne({ _id: memberId(workspaceId, userId) })).deletedCount > 0;
    },
    async removeUser(userId: string): Promise<void> {
      await WorkspaceMember.deleteMany({ user_id: userId });
    },
    async removeWorkspace(workspaceId: string): Promise<void> {
      await WorkspaceMember.deleteMany({ workspace_id: workspaceId });
    },
  };
}

export type WorkspaceMembers = ReturnType<typeof createWorkspaceMembers>;

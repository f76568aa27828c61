import { type Caller, actsForOperator } from '../../access/caller';
import { type Role, USER_ID_PATTERN } from '../../contracts/roles';
import type { AccessUserStore } from '../../db/access-users';
import type { WorkspaceMembers } from '../../db/workspace-members';
import { DEFAULT_WORKSPACE, workspaceScope } from '../../db/workspace-scope';
import { ForbiddenError } from '../../errors';

/** Who a decision is by: what the workflow records and checks against the node's `approvers`. */
export interface Decider {
  /** A user's id (`UA…`), or the name an operator gave, or a link recipient's id (`email:ada@…`). */
  userId: string;
  /** The user's username, when `userId` is an enabled user's. */
  username: string | null;
  /**
   * The user's role in the pause's workspace as it is now (an installation admin's is admin), when
   * `userId` is an enabled user's; null when they are no member of it.
   */
  role: Role | null;
}

/**
 * What PySpur's web UI sends as `user_id` with every decision from its inbox (a fixed string: the
 * UI knows no users). From a signed-in user it means themself.
 */
export const UI_PLACEHOLDER_USER = 'current-user';

/**
 * Who decides a pause. A user decides as themself: the `user_id` they send must be their own id,
 * their username or the UI's placeholder, else 403. An operator (a configured key, its session,
 * the keyless local instance) names the decider as PySpur clients do; when that name is a user's
 * id, the decision is that user's (their username and role). A disabled user decides nothing.
 */
export function createDeciders(users: Pick<AccessUserStore, 'get'>, members: Pick<WorkspaceMembers, 'roleOf'>) {
  /**
   * The named id as a decider in `workspaceId`: the user it names (enabled, else 403) with their
   * role there, or a name that is no user.
   */
  async function named(userId: string, workspaceId: string): Promise<Decider> {
    const user = USER_ID_PATTERN.test(userId) ? await users.get(userId) : null;
    if (!user) return { userId, username: null, role: null };
    if (user.disabled) throw new ForbiddenError(`${userId} is disabled: a disabled user decides nothing`);
    return { userId, username: user.username, role: await members.roleOf(user, workspaceId) };
  }
  /** A request's pause is of the workspace it acts in (another's run is not found). */
  const requestWorkspace = () => workspaceScope.current() ?? DEFAULT_WORKSPACE;

  return {
    /** The decider of a `process_pause_action` request by `caller` naming `userId`. */
    async ofRequest(caller: Caller | null, userId: string): Promise<Decider> {
      if (caller === null || actsForOperator(caller)) return named(userId, requestWorkspace());
      const self = caller.userId as string;
      if (userId !== self && userId !== caller.username && userId !== UI_PLACEHOLDER_USER)
        throw new ForbiddenError(
          `A signed-in user decides as themself: user_id must be your id (${self}), your username or '${UI_PLACEHOLDER_USER}', not '${userId}'`,
        );
      return named(self, requestWorkspace());
    },

    /** The decider of an approval link: its recipient, with their role in the pause's workspace. */
    ofRecipient: named,
  };
}

export type Deciders = ReturnType<typeof createDeciders>;

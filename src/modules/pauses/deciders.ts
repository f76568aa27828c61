import { type Caller, actsForOperator } from '../../access/caller';
import { type Role, USER_ID_PATTERN, isRole } from '../../contracts/roles';
import type { AccessUserStore } from '../../db/access-users';
import { ForbiddenError } from '../../errors';

/** Who a decision is by: what the workflow records and checks against the node's `approvers`. */
export interface Decider {
  /** A user's id (`UA…`), or the name an operator gave, or a link recipient's id (`email:ada@…`). */
  userId: string;
  /** The user's username, when `userId` is an enabled user's. */
  username: string | null;
  /** The user's role (as `access_users` holds it now), when `userId` is an enabled user's. */
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
export function createDeciders(users: Pick<AccessUserStore, 'get'>) {
  /** The named id as a decider: the user it names (enabled, else 403), or a name that is no user. */
  async function named(userId: string): Promise<Decider> {
    const user = USER_ID_PATTERN.test(userId) ? await users.get(userId) : null;
    if (!user) return { userId, username: null, role: null };
    if (user.disabled) throw new ForbiddenError(`${userId} is disabled: a disabled user decides nothing`);
    return { userId, username: user.username, role: isRole(user.role) ? user.role : null };
  }

  return {
    /** The decider of a `process_pause_action` request by `caller` naming `userId`. */
    async ofRequest(caller: Caller | null, userId: string): Promise<Decider> {
      if (caller === null || actsForOperator(caller)) return named(userId);
      const self = caller.userId as string;
      if (userId !== self && userId !== caller.username && userId !== UI_PLACEHOLDER_USER)
        throw new ForbiddenError(
          `A signed-in user decides as themself: user_id must be your id (${self}), your username or '${UI_PLACEHOLDER_USER}', not '${userId}'`,
        );
      return named(self);
    },

    /** The decider of an approval link: its recipient. */
    ofRecipient: named,
  };
}

export type Deciders = ReturnType<typeof createDeciders>;

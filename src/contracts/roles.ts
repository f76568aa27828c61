/**
 * The roles a user or key may hold, weakest first: each holds every permission of the ones before it
 * (src/access/permissions.ts says which). Shared with workflow definitions, whose approval nodes may
 * name the roles allowed to decide.
 */
export const ROLES = ['viewer', 'approver', 'operator', 'builder', 'admin'] as const;
export type Role = (typeof ROLES)[number];

export const roleRank = (role: Role): number => ROLES.indexOf(role);

/** The weaker of two roles: what a key of `keyRole` held by a user of `userRole` may do. */
export function weakerRole(a: Role, b: Role): Role {
  return roleRank(a) <= roleRank(b) ? a : b;
}

export const isRole = (value: unknown): value is Role => (ROLES as readonly unknown[]).includes(value);

/** A user's id (`UA<n>`, src/db/ids.ts): what a node's `approvers.users` and a decision name. */
export const USER_ID_PATTERN = /^UA\d{1,15}$/;

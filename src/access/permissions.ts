import { ROLES, type Role, roleRank } from '../contracts/roles';

/**
 * The one table the gate enforces: each permission, the weakest role that holds it, and what it
 * covers. Every API route names one permission (src/http/route.ts; a reading route defaults to
 * `read`); docs/security.md shows this table, and OpenAPI shows each route's as `x-spur-permission`.
 */
export const PERMISSIONS = {
  read: {
    role: 'viewer',
    covers: 'reading workflows, runs, datasets, files, RAG, schedules, usage, evals (never a secret)',
  },
  self: { role: 'viewer', covers: 'seeing yourself (`/access/me/`) and managing your own API keys' },
  'pause.decide': { role: 'approver', covers: 'deciding a pause the node lets you decide' },
  run: {
    role: 'operator',
    covers:
      'starting, cancelling and rerunning runs, batch runs, chat completions, MCP calls; schedule pause, unpause and trigger',
  },
  build: {
    role: 'builder',
    covers:
      'creating, editing and deleting workflows, datasets, files, RAG, schedules, triggers, evals, budgets, chat users and sessions; MCP publishing; AI assistance',
  },
  'users.manage': { role: 'admin', covers: "users, and other users' keys" },
  'credentials.manage': { role: 'admin', covers: 'env management: stored provider keys and settings' },
  'limits.manage': { role: 'admin', covers: 'provider limits and model prices' },
  'audit.read': { role: 'admin', covers: 'the audit trail, its export and verification' },
} as const satisfies Record<string, { role: Role; covers: string }>;

export type Permission = keyof typeof PERMISSIONS;

export const PERMISSION_NAMES = Object.keys(PERMISSIONS) as Permission[];

export function roleAllows(role: Role, permission: Permission): boolean {
  return roleRank(role) >= roleRank(PERMISSIONS[permission].role);
}

/** The permissions a role holds, in table order. */
export function permissionsOf(role: Role): Permission[] {
  return PERMISSION_NAMES.filter((p) => roleAllows(role, p));
}

export { ROLES };

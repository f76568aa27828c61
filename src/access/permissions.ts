import { ROLES, type Role, roleRank } from '../contracts/roles';

/**
 * The one table the gate enforces: each permission, the weakest role that holds it, and what it
 * covers. A role is the caller's role in the workspace the request acts in; an `installation`
 * permission is held only by an admin of `default` (or the operator), whose role is admin everywhere. Every API route names one permission (src/http/route.ts; a reading route defaults to
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
      'starting, cancelling and rerunning runs, batch runs, chat completions, MCP calls; pausing and resuming workflows; schedule pause, unpause and trigger',
  },
  build: {
    role: 'builder',
    covers:
      'creating, editing and deleting workflows, datasets, files, RAG, schedules, triggers, evals, budgets, chat users and sessions; deleting finished runs and setting their retention; MCP publishing; AI assistance',
  },
  'members.manage': { role: 'admin', covers: "the workspace's members and their roles" },
  'limits.manage': { role: 'admin', covers: "the workspace's provider limits" },
  'credentials.manage': { role: 'admin', covers: "env management: the workspace's stored provider keys and settings" },
  'retention.prune': {
    role: 'admin',
    covers: "deleting the workspace's runs past their retention now (`POST /runs/retention/prune/`)",
  },
  'users.manage': {
    role: 'admin',
    installation: true,
    covers: "installation: users, workspaces, and other users' keys",
  },
  'fleet.manage': {
    role: 'admin',
    installation: true,
    covers: 'installation: fleet-wide provider limits (across workspaces) and model prices',
  },
  'usage.all': { role: 'admin', installation: true, covers: "installation: every workspace's usage, side by side" },
  'audit.read': {
    role: 'admin',
    installation: true,
    covers: 'installation: the audit trail, its export and verification',
  },
} as const satisfies Record<string, { role: Role; covers: string; installation?: true }>;

export type Permission = keyof typeof PERMISSIONS;

export const PERMISSION_NAMES = Object.keys(PERMISSIONS) as Permission[];

export function roleAllows(role: Role, permission: Permission): boolean {
  return roleRank(role) >= roleRank(PERMISSIONS[permission].role);
}

/** Whether only an installation admin holds the permission (whatever their role in a workspace). */
export const installationWide = (permission: Permission): boolean => 'installation' in PERMISSIONS[permission];

/** What the gate checks: the caller's role in its workspace, and for an installation permission, that it administers the installation. */
export function callerAllows(caller: { role: Role; installationAdmin: boolean }, permission: Permission): boolean {
  return roleAllows(caller.role, permission) && (!installationWide(permission) || caller.installationAdmin);
}

/** The permissions a caller holds, in table order. */
export function permissionsOf(caller: { role: Role; installationAdmin: boolean }): Permission[] {
  return PERMISSION_NAMES.filter((p) => callerAllows(caller, p));
}

export { ROLES };

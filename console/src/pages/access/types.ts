// The access API's shapes, as the server's own schemas declare them (types only: nothing of the
// server is bundled, scripts/build-console.ts refuses it).
import type { z } from 'zod';
import type { Role } from '../../../../src/contracts/roles';
import type {
  AccessKeyResponse,
  AccessUserResponse,
  NewAccessKeyResponse,
} from '../../../../src/modules/access/access.schemas';
import type { AuditEntryResponse, AuditVerifyResponse } from '../../../../src/modules/access/audit.schemas';
import type { WorkspaceMemberResponse, WorkspaceResponse } from '../../../../src/modules/access/workspaces.schemas';

export type { Role };
export type User = AccessUserResponse;
export type Key = AccessKeyResponse;
/** A key as POST /api/access/keys/ answers it: the only answer that holds the key itself. */
export type NewKey = z.output<typeof NewAccessKeyResponse>;
export type Workspace = WorkspaceResponse;
export type Member = WorkspaceMemberResponse;
export type AuditEntry = z.output<typeof AuditEntryResponse>;
export type AuditVerification = z.output<typeof AuditVerifyResponse>;

/**
 * The roles, weakest first. The server's list cannot be bundled, so it is repeated here; the record
 * makes the type check fail when a role is added there and not here.
 */
const RANKS: Record<Role, number> = { viewer: 0, approver: 1, operator: 2, builder: 3, admin: 4 };
export const ROLES = (Object.keys(RANKS) as Role[]).sort((a, b) => RANKS[a] - RANKS[b]);

/** A role chosen in a select, or null when its value is none of them (the "no role" option). */
export const roleOf = (value: string): Role | null => (value in RANKS ? (value as Role) : null);

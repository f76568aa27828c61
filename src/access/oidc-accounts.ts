import { type Role, isRole, roleRank } from '../contracts/roles';
import { type AccessUserStore, UsernameTaken } from '../db/access-users';
import type { AccessUserDoc } from '../db/models';

/** How a provider's account becomes a Spur user (SPUR_OIDC_ROLE_CLAIM, SPUR_OIDC_DEFAULT_ROLE). */
export interface OidcAccountRules {
  roleClaim: string | undefined;
  defaultRole: Role;
}

/** What a validated ID token says about its holder (the claims Spur reads). */
export interface OidcIdentity {
  iss: string;
  sub: string;
  [claim: string]: unknown;
}

export type OidcSignInOutcome = { user: AccessUserDoc; created: boolean } | { disabled: AccessUserDoc };

/**
 * The role the ID token names in the role claim: a role name, or a list of values whose strongest
 * role name counts; anything else (absent, no role's name) gives the default role.
 */
export function roleFromClaims(claims: Record<string, unknown>, rules: OidcAccountRules): Role {
  if (rules.roleClaim === undefined) return rules.defaultRole;
  const value = claims[rules.roleClaim];
  const named = (Array.isArray(value) ? value : [value]).filter(isRole);
  return (
    named.reduce<Role | null>((best, role) => (best && roleRank(best) >= roleRank(role) ? best : role), null) ??
    rules.defaultRole
  );
}

const USERNAME_MAX = 64;
/** Room for a `-<n>` suffix when the name is taken. */
const BASE_MAX = USERNAME_MAX - 8;

/**
 * A username (`[A-Za-z0-9][A-Za-z0-9._@-]*`, as the users API takes) from `preferred_username`, else
 * `email`, else `sub`: other characters become `-`.
 */
export function usernameFromClaims(claims: Record<string, unknown>): string {
  for (const claim of ['preferred_username', 'email', 'sub']) {
    const value = claims[claim];
    if (typeof value !== 'string') continue;
    const name = value
      .replace(/[^A-Za-z0-9._@-]/g, '-')
      .replace(/^[^A-Za-z0-9]+/, '')
      .slice(0, BASE_MAX);
    if (name) return name;
  }
  return 'user';
}

const textClaim = (value: unknown, max: number) =>
  typeof value === 'string' && value.length > 0 && value.length <= max ? value : null;

/** The account key of an ID token's holder: `<issuer> <sub>` (a `sub` is unique only per issuer). */
export const oidcSubject = (claims: OidcIdentity) => `${claims.iss} ${claims.sub}`;

/**
 * The user an ID token signs in: found by its `<issuer> <sub>` only (never by username or email,
 * which another account could claim), or provisioned on its first sign-in with a free username. A
 * disabled user is answered as such, unchanged. With a role claim, every sign-in sets the role from
 * it (the provider stays the source of truth: a role changed in Spur is overwritten at the next
 * sign-in); without one, the default role is given once and roles are then managed in Spur.
 */
export async function signInOidcAccount(
  users: AccessUserStore,
  claims: OidcIdentity,
  rules: OidcAccountRules,
): Promise<OidcSignInOutcome> {
  const subject = oidcSubject(claims);
  const role = roleFromClaims(claims, rules);
  const known = await users.byOidcSubject(subject);
  if (known) {
    if (known.disabled) return { disabled: known };
    if (rules.roleClaim === undefined || known.role === role) return { user: known, created: false };
    const updated = await users.update(known._id, { role });
    return updated ? { user: updated, created: false } : signInOidcAccount(users, claims, rules);
  }
  const base = usernameFromClaims(claims);
  for (let n = 1; n <= 50; n++) {
    try {
      const user = await users.create({
        username: n === 1 ? base : `${base}-${n}`,
        email: textClaim(claims.email, 254),
        display_name: textClaim(claims.name, 200),
        role,
        password_hash: null,
        oidc_subject: subject,
      });
      return { user, created: true };
    } catch (err) {
      if (!(err instanceof UsernameTaken)) throw err;
      // The same account's sign-in on another tab or replica made the user first: that one it is.
      const raced = await users.byOidcSubject(subject);
      if (raced) return raced.disabled ? { disabled: raced } : { user: raced, created: false };
    }
  }
  throw new Error(`no free username after 50 tries from '${base}'`);
}

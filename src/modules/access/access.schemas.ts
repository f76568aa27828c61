import { ROLES, USER_ID_PATTERN } from '../../contracts/roles';
import { z } from '../../zod';

export const RoleName = z
  .enum(ROLES)
  .openapi('Role', { description: 'viewer < approver < operator < builder < admin' });

/** `default`, or `WS<n>`. */
export const WorkspaceId = z.string().regex(/^(default|WS\d{1,15})$/, 'a workspace id (default or WS…)');

const Username = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._@-]*$/, 'letters, digits and . _ @ - (starting with a letter or digit)');
/** Write-only: hashed with scrypt, never answered. */
const Password = z.string().min(10).max(256);
const Email = z.email().max(254);
const DisplayName = z.string().min(1).max(200);

export const AccessUserIdParams = z.object({ id: z.string().regex(USER_ID_PATTERN, 'a user id (UA…)') });
export const AccessKeyIdParams = z.object({ id: z.string().regex(/^K\d{1,15}$/, 'a key id (K…)') });

export const AccessUserCreateRequest = z
  .strictObject({
    username: Username,
    email: Email.optional(),
    display_name: DisplayName.optional(),
    role: RoleName.nullable().openapi({
      description: 'The role in the default workspace; null: no member of it (add them to a workspace instead)',
    }),
    password: Password.optional(),
  })
  .openapi('AccessUserCreateRequest');
export type AccessUserCreateInput = z.output<typeof AccessUserCreateRequest>;

/** Only the fields sent change; `null` clears email, display name or password. */
export const AccessUserUpdateRequest = z
  .strictObject({
    username: Username.optional(),
    email: Email.nullable().optional(),
    display_name: DisplayName.nullable().optional(),
    role: RoleName.nullable().optional().openapi({ description: 'The role in the default workspace; null: none' }),
    disabled: z.boolean().optional(),
    password: Password.nullable().optional(),
  })
  .openapi('AccessUserUpdateRequest');
export type AccessUserUpdateInput = z.output<typeof AccessUserUpdateRequest>;

export const AccessUserResponse = z
  .object({
    id: z.string().openapi({ description: 'UA<n>' }),
    username: z.string(),
    email: z.string().nullable(),
    display_name: z.string().nullable(),
    role: RoleName.nullable().openapi({
      description:
        'The role in the default workspace (an admin there administers the installation); null: no member of it',
    }),
    disabled: z.boolean(),
    /** Whether the user may sign in with a password (the hash itself is never answered). */
    has_password: z.boolean(),
    /** Provisioned from an OpenID provider. */
    oidc: z.boolean(),
    created_at: z.iso.datetime(),
    last_seen_at: z.iso.datetime().nullable(),
  })
  .openapi('AccessUser');
export type AccessUserResponse = z.output<typeof AccessUserResponse>;

export const AccessKeyCreateRequest = z
  .strictObject({
    name: z.string().min(1).max(100),
    role: RoleName.optional().openapi({ description: 'At most your own role; your role when left out' }),
    expires_at: z.iso.datetime({ offset: true }).optional(),
    user_id: z
      .string()
      .regex(USER_ID_PATTERN)
      .optional()
      .openapi({ description: "An admin's only: make the key for this user (a configured key must name one)" }),
    workspace_id: WorkspaceId.optional().openapi({
      description: "An admin's only: the workspace the key acts in; the one the request acts in when left out",
    }),
  })
  .openapi('AccessKeyCreateRequest');
export type AccessKeyCreateInput = z.output<typeof AccessKeyCreateRequest>;

export const AccessKeyResponse = z
  .object({
    id: z.string().openapi({ description: 'K<n>' }),
    name: z.string(),
    user_id: z.string(),
    role: RoleName,
    workspace_id: z.string().openapi({ description: 'The workspace the key acts in' }),
    expires_at: z.iso.datetime().nullable(),
    created_at: z.iso.datetime(),
    last_used_at: z.iso.datetime().nullable(),
  })
  .openapi('AccessKey');
export type AccessKeyResponse = z.output<typeof AccessKeyResponse>;

export const NewAccessKeyResponse = AccessKeyResponse.extend({
  key: z.string().openapi({ description: 'The key: shown this once, stored only as a hash' }),
}).openapi('NewAccessKey');

export const MeResponse = z
  .object({
    user: AccessUserResponse.nullable().openapi({ description: 'Null for a configured key (SPUR_API_KEY_HASHES)' }),
    username: z.string(),
    role: RoleName,
    via: z.enum(['key', 'session', 'oidc', 'local']),
    key_id: z.string().nullable(),
    workspace_id: z.string().openapi({ description: 'The workspace your requests act in' }),
    workspaces: z
      .array(z.object({ id: z.string(), name: z.string(), role: RoleName }))
      .openapi({ description: 'The workspaces you may act in, with your role in each' }),
    permissions: z.array(z.string()),
  })
  .openapi('Me');

export const MeUpdateRequest = z
  .strictObject({
    workspace_id: WorkspaceId.openapi({
      description: 'Switch this browser session to another of your workspaces (a key acts in its own)',
    }),
  })
  .openapi('MeUpdateRequest');

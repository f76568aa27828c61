import { PageQuery } from '../../http/pagination';
import { z } from '../../zod';

const Text = (max: number) => z.string().min(1).max(max);

/** What an entry must match to be listed or exported; every filter given must hold. */
export const AuditFilterQuery = z.object({
  actor: Text(200).optional().openapi({ description: 'A user id (`UA…`) or a key id (`K…`, `config:…`)' }),
  action: Text(100).optional().openapi({ description: 'e.g. `workflow.update`' }),
  target_type: Text(100).optional(),
  target_id: Text(256).optional(),
  request_id: Text(128).optional(),
  from: z.iso.datetime({ offset: true }).optional().openapi({ description: 'Entries from this time on (inclusive)' }),
  to: z.iso.datetime({ offset: true }).optional().openapi({ description: 'Entries before this time (exclusive)' }),
});
export type AuditFilterInput = z.output<typeof AuditFilterQuery>;

export const AuditListQuery = PageQuery.extend(AuditFilterQuery.shape);

export const AuditEntryResponse = z
  .object({
    id: z.string().openapi({ description: 'AE<n>: the entry’s place in the chain' }),
    time: z.iso.datetime(),
    actor: z.object({
      user_id: z.string().optional(),
      key_id: z.string().optional(),
      via: z.string().openapi({ description: 'key, session, oidc, local, approval_link, webhook or anonymous' }),
    }),
    action: z.string().openapi({ description: '<resource>.<verb>, e.g. workflow.update, pause.approve' }),
    target: z.object({ type: z.string(), id: z.string().nullable() }),
    outcome: z.number().int().openapi({ description: 'The HTTP status answered' }),
    request_id: z.string(),
    ip: z.string(),
  })
  .openapi('AuditEntry');

export const AuditVerifyResponse = z
  .object({
    ok: z.boolean(),
    entries: z.number().int(),
    first_bad_id: z
      .string()
      .optional()
      .openapi({ description: 'The first entry changed, or missing (named though it is gone)' }),
    detail: z.string().optional(),
  })
  .openapi('AuditVerification');

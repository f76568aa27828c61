import assert from 'node:assert/strict';
import type { client } from './http';

/**
 * The audit trail's collections: it records every attempt, refused ones too, and its head follows
 * on its own: an entry is the trail's purpose, not an effect of the request a test looks for.
 */
export const AUDIT_COLLECTIONS: readonly string[] = ['audit_entries', 'audit_head'];

/** An audit entry as `GET /api/access/audit/` answers it. */
export interface AuditEntryView {
  id: string;
  time: string;
  actor: { user_id?: string; key_id?: string; via: string };
  action: string;
  target: { type: string; id: string | null };
  outcome: number;
  request_id: string;
  ip: string;
}

/** The one entry a request left, found through the api by the id the request was answered with. */
export async function auditEntryOf(
  admin: ReturnType<typeof client>,
  requestId: string,
  /** What the request was, for the message when its entry is missing. */
  request = '',
): Promise<AuditEntryView> {
  const res = await admin.get(`/access/audit/?request_id=${encodeURIComponent(requestId)}`);
  assert.equal(res.status, 200, res.text);
  assert.equal(res.body.length, 1, `one entry for request ${requestId} (${request}): ${res.text}`);
  return res.body[0] as AuditEntryView;
}

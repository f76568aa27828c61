/**
 * What a handler tells the audit trail about its request, when the route alone cannot say it: the
 * action (`session.sign_in`), the thing acted on once known (the user signed in), and who acted when
 * the gate could not know (the user a sign-in proves, an approval link's recipient). The audit
 * recorder records every state-changing request, and any other request that carries a note (an
 * OpenID callback is a GET that signs someone in).
 */
export interface AuditNote {
  action: string;
  target?: { type: string; id: string | null };
  /** Ids and how they were proven, never a credential; absent: the caller the gate found, if any. */
  actor?: { user_id?: string | null; key_id?: string | null; via: string };
}

export function noteAudit(state: unknown, note: AuditNote): void {
  (state as { auditNote?: AuditNote }).auditNote = note;
}

export function auditNoteOf(state: unknown): AuditNote | null {
  return (state as { auditNote?: AuditNote }).auditNote ?? null;
}

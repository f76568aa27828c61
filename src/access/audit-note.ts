/**
 * What a handler tells the audit trail about its request, when the route alone cannot say it: the
 * action (`session.sign_in`), and the thing acted on once known (the user signed in). The audit
 * recorder records every state-changing request, and any other request that carries a note (an
 * OpenID callback is a GET that signs someone in).
 */
export interface AuditNote {
  action: string;
  target?: { type: string; id: string | null };
}

export function noteAudit(state: unknown, note: AuditNote): void {
  (state as { auditNote?: AuditNote }).auditNote = note;
}

export function auditNoteOf(state: unknown): AuditNote | null {
  return (state as { auditNote?: AuditNote }).auditNote ?? null;
}

import { Schema, type InferSchemaType } from 'mongoose';

/**
 * One entry of the audit trail (`AE<seq>`): who did what to which thing, and how it ended. Never a
 * value: no body, key, password or token; ids, names of actions, a status, an address. `seq` is the
 * chain's order (unique: two writers cannot both take one number); `mac` chains the entry to the one
 * before it (src/db/audit-chain.ts).
 */
export const auditEntrySchema = new Schema(
  {
    _id: { type: String, required: true },
    seq: { type: Number, required: true, unique: true },
    time: { type: Date, required: true },
    actor: {
      type: new Schema(
        {
          /** `UA…`, `local`; null for a configured key or nobody. */
          user_id: { type: String, default: null },
          /** `K…` or `config:<tag>`; null for a session or nobody. */
          key_id: { type: String, default: null },
          /** `key`, `session`, `oidc`, `local`, `approval_link`, `webhook` or `anonymous`. */
          via: { type: String, required: true },
        },
        { _id: false },
      ),
      required: true,
    },
    /** `<resource>.<verb>`: `workflow.update`, `pause.approve`, `session.sign_in`. */
    action: { type: String, required: true },
    target: {
      type: new Schema({ type: { type: String, required: true }, id: { type: String, default: null } }, { _id: false }),
      required: true,
    },
    /** The HTTP status answered. */
    outcome: { type: Number, required: true },
    request_id: { type: String, required: true },
    ip: { type: String, required: true },
    mac: { type: String, required: true },
  },
  { collection: 'audit_entries', versionKey: false },
);
auditEntrySchema.index({ time: 1 });
auditEntrySchema.index({ action: 1 });
auditEntrySchema.index({ 'target.type': 1, 'target.id': 1 });
auditEntrySchema.index({ 'actor.user_id': 1 });
auditEntrySchema.index({ 'actor.key_id': 1 });
auditEntrySchema.index({ request_id: 1 });

export type AuditEntryDoc = InferSchemaType<typeof auditEntrySchema> & { _id: string };

/**
 * The trail's head (one document, `_id: 'head'`): the last entry's seq and mac, under a MAC of its
 * own. Deleting the newest entries leaves the head pointing past the end, which verify reports; the
 * head cannot be moved back without the server's secret key.
 */
export const auditHeadSchema = new Schema(
  {
    _id: { type: String, required: true },
    seq: { type: Number, required: true },
    mac: { type: String, required: true },
    head_mac: { type: String, required: true },
  },
  { collection: 'audit_head', versionKey: false },
);

export type AuditHeadDoc = InferSchemaType<typeof auditHeadSchema> & { _id: string };

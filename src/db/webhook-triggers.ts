import { insertWithNewId } from './ids';
import type { Models, WebhookTriggerDoc } from './models';
import type { StoredCallback } from './runs/run-documents';

/** How deliveries are signed: `tolerance` is the stripe scheme's, null for hmac. */
export interface StoredSignature {
  scheme: 'hmac' | 'stripe';
  header: string;
  algorithm: 'hmac-sha256' | 'hmac-sha1';
  prefix: string;
  tolerance_seconds: number | null;
}

/** What a trigger stores besides its id and times; secrets arrive sealed, the token as its hash and seal. */
export interface StoredTriggerFields {
  name: string;
  inputMapping: string | null;
  signature: StoredSignature | null;
  secretSealed: string | null;
  dedupeHeader: string | null;
  respond: 'accepted' | 'result';
  maxBodyBytes: number;
  ratePerSecond: number;
  /** Its runs' callback, the secret sealed. */
  callback: StoredCallback | null;
}

export interface StoredToken {
  hash: string;
  sealed: string;
}

function fieldsDoc(f: StoredTriggerFields) {
  return {
    name: f.name,
    input_mapping: f.inputMapping,
    signature: f.signature,
    secret_sealed: f.secretSealed,
    dedupe_header: f.dedupeHeader,
    respond: f.respond,
    max_body_bytes: f.maxBodyBytes,
    rate_per_second: f.ratePerSecond,
    callback: f.callback,
  };
}

/** The only writer of `webhook_triggers`. Every lookup reads the database: no process caches a token. */
export function createWebhookTriggerStore(models: Models) {
  const { WebhookTrigger } = models;
  const byId = (id: string) => WebhookTrigger.findById(id).lean<WebhookTriggerDoc>();

  return {
    byId,
    byTokenHash: (hash: string) => WebhookTrigger.findOne({ token_hash: hash }).lean<WebhookTriggerDoc>(),
    listOfWorkflow: (workflowId: string) =>
      WebhookTrigger.find({ workflow_id: workflowId }).sort({ seq: 1 }).lean<WebhookTriggerDoc[]>(),

    /** Inserts a trigger under a new `TR<n>`; its token and secret are sealed for that id, hence the callback. */
    async create(
      workflowId: string,
      fields: (id: string) => StoredTriggerFields & { token: StoredToken },
      now: Date,
    ): Promise<WebhookTriggerDoc> {
      return insertWithNewId(
        models.conn,
        'webhookTrigger',
        async (id) => (await WebhookTrigger.exists({ _id: id })) !== null,
        async (id, seq) => {
          const f = fields(id);
          const doc = {
            _id: id,
            seq,
            workflow_id: workflowId,
            ...fieldsDoc(f),
            token_hash: f.token.hash,
            token_sealed: f.token.sealed,
            created_at: now,
            updated_at: now,
          };
          await WebhookTrigger.create(doc);
          return doc as WebhookTriggerDoc;
        },
      );
    },

    async update(id: string, fields: StoredTriggerFields, now: Date): Promise<void> {
      await WebhookTrigger.updateOne({ _id: id }, { $set: { ...fieldsDoc(fields), updated_at: now } });
    },

    /** A new token: from this write on, the old one finds nothing in any process. */
    async rotate(id: string, token: StoredToken, now: Date): Promise<void> {
      await WebhookTrigger.updateOne(
        { _id: id },
        { $set: { token_hash: token.hash, token_sealed: token.sealed, updated_at: now } },
      );
    },

    /** True when a trigger was removed. */
    async remove(id: string): Promise<boolean> {
      return (await WebhookTrigger.deleteOne({ _id: id })).deletedCount > 0;
    },

    async removeOfWorkflow(workflowId: string): Promise<void> {
      await WebhookTrigger.deleteMany({ workflow_id: workflowId });
    },
  };
}

export type WebhookTriggerStore = ReturnType<typeof createWebhookTriggerStore>;

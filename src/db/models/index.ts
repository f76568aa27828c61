import { Model, mongo, type Connection } from 'mongoose';
import { eachAtMost } from '../../at-most-at-once';
import { callbackDeliverySchema, type CallbackDeliveryDoc } from './callback-delivery.model';
import {
  approvalDeliveryPauseSchema,
  approvalDeliverySchema,
  type ApprovalDeliveryDoc,
  type ApprovalDeliveryPauseDoc,
} from './approval-delivery.model';
import { datasetRowSchema, type DatasetRowDoc } from './dataset-row.model';
import { datasetSchema, type DatasetDoc } from './dataset.model';
import { envVarSchema, type EnvVarDoc } from './env-var.model';
import { modelPriceSchema, type ModelPriceDoc } from './model-price.model';
import { usageRecordSchema, type UsageRecordDoc } from './usage-record.model';
import { usageRollupSchema, type UsageRollupDoc } from './usage-rollup.model';
import { providerLimitSchema, type ProviderLimitDoc } from './provider-limit.model';
import { workflowBudgetSchema, type WorkflowBudgetDoc } from './workflow-budget.model';
import { mcpToolSchema, type McpToolDoc } from './mcp-tool.model';
import { spendEntrySchema, type SpendEntryDoc } from './spend-entry.model';
import { browserSessionSchema, type BrowserSessionDoc } from './browser-session.model';
import { oidcSignInSchema, type OidcSignInDoc } from './oidc-sign-in.model';
import { accessUserSchema, type AccessUserDoc } from './access-user.model';
import { accessKeySchema, type AccessKeyDoc } from './access-key.model';
import { auditEntrySchema, auditHeadSchema, type AuditEntryDoc, type AuditHeadDoc } from './audit-entry.model';
import { ensureExpiryIndex } from './expiry-index';
import { workspaceOwned } from '../workspace-owned';
import { workspaceSchema, type WorkspaceDoc } from './workspace.model';
import { workspaceMemberSchema, type WorkspaceMemberDoc } from './workspace-member.model';
import { idempotencyKeySchema, type IdempotencyKeyDoc } from './idempotency-key.model';
import { outputFileSchema, type OutputFileDoc } from './output-file.model';
import { pauseSchema, type PauseDoc } from './pause.model';
import { runCancelRequestSchema, type RunCancelRequestDoc } from './run-cancel-request.model';
import { ragCollectionSchema, type RagCollectionDoc } from './rag-collection.model';
import { ragChunkPageSchema, ragDocumentSchema, type RagChunkPageDoc, type RagDocumentDoc } from './rag-document.model';
import { vectorIndexSchema, type VectorIndexDoc } from './vector-index.model';
import { runSchema, type RunDoc } from './run.model';
import { scheduleSchema, type ScheduleDoc } from './schedule.model';
import { scheduleFireSchema, type ScheduleFireDoc } from './schedule-fire.model';
import { scheduleSkipSchema, type ScheduleSkipDoc } from './schedule-skip.model';
import { settingsGenerationSchema, type SettingsGenerationDoc } from './settings-generation.model';
import { workflowPauseSchema, type WorkflowPauseDoc } from './workflow-pause.model';
import { heldDeliverySchema, type HeldDeliveryDoc } from './held-delivery.model';
import { runTasksSchema, type RunTasksDoc } from './run-tasks.model';
import { runEventSchema, type RunEventDoc } from './run-event.model';
import { taskDeltaSchema, type TaskDeltaDoc } from './task-delta.model';
import { sessionTurnSchema, type SessionTurnDoc } from './session-turn.model';
import { sessionSchema, type SessionDoc } from './session.model';
import { userSchema, type UserDoc } from './user.model';
import { workflowVersionSchema, type WorkflowVersionDoc } from './workflow-version.model';
import { workflowSchema, type WorkflowDoc } from './workflow.model';
import { webhookTriggerSchema, type WebhookTriggerDoc } from './webhook-trigger.model';
import { webhookHitSchema, type WebhookHitDoc } from './webhook-hit.model';
import { inboundCallbackSchema, type InboundCallbackDoc } from './inbound-callback.model';
import { reconcileSuspectSchema, type ReconcileSuspectDoc } from './reconcile-suspect.model';
import { evalSuiteSchema, type EvalSuiteDoc } from './eval-suite.model';
import { evalRunSchema, type EvalRunDoc } from './eval-run.model';
import { evalResultSchema, type EvalResultDoc } from './eval-result.model';
import { evalComparisonSchema, type EvalComparisonDoc } from './eval-comparison.model';
import {
  providerBatchAnswerSchema,
  providerBatchRowSchema,
  providerBatchSchema,
  type ProviderBatchAnswerDoc,
  type ProviderBatchDoc,
  type ProviderBatchRowDoc,
} from './provider-batch.model';
import {
  nodeAttemptRunSchema,
  nodeAttemptSchema,
  type NodeAttemptDoc,
  type NodeAttemptRunDoc,
} from './node-attempt.model';
import { runActionItemSchema, runActionSchema, type RunActionDoc, type RunActionItemDoc } from './run-action.model';

export type { DatasetDoc, DatasetRowDoc, OutputFileDoc };
export type { RagChunkPageDoc, RagCollectionDoc, RagDocumentDoc, VectorIndexDoc };
export type { EnvVarDoc, PauseDoc, RunDoc, RunTasksDoc, WorkflowDoc, WorkflowVersionDoc };
export type { SessionDoc, SessionTurnDoc, UserDoc };
export type { ApprovalDeliveryDoc, ApprovalDeliveryPauseDoc, CallbackDeliveryDoc };
export type { RunEventDoc, TaskDeltaDoc };
export type { IdempotencyKeyDoc };
export type { AccessKeyDoc, AccessUserDoc, BrowserSessionDoc, OidcSignInDoc };
export type { AuditEntryDoc, AuditHeadDoc };
export type { WorkspaceDoc, WorkspaceMemberDoc };
export type { ScheduleDoc, ScheduleFireDoc, ScheduleSkipDoc };
export type { HeldDeliveryDoc, WorkflowPauseDoc };
export type { McpToolDoc };
export type { ReconcileSuspectDoc, WebhookHitDoc, WebhookTriggerDoc, InboundCallbackDoc };
export type { EvalComparisonDoc, EvalResultDoc, EvalRunDoc, EvalSuiteDoc };
export type { RunActionDoc, RunActionItemDoc };
export type { ProviderBatchAnswerDoc, ProviderBatchDoc, ProviderBatchRowDoc };
export type { NodeAttemptDoc, NodeAttemptRunDoc };

/**
 * The collections that belong to a workspace (src/db/workspace-owned.ts): everything a team makes
 * or runs. The rest are the installation's: identities, sessions and the audit trail, prices,
 * credentials and limits (per workspace next), and the reconciler's own records.
 */
const WORKSPACE_OWNED = [
  envVarSchema,
  workflowSchema,
  workflowVersionSchema,
  usageRecordSchema,
  usageRollupSchema,
  workflowBudgetSchema,
  mcpToolSchema,
  spendEntrySchema,
  runSchema,
  runTasksSchema,
  pauseSchema,
  runEventSchema,
  taskDeltaSchema,
  datasetSchema,
  datasetRowSchema,
  outputFileSchema,
  userSchema,
  sessionSchema,
  sessionTurnSchema,
  ragCollectionSchema,
  ragDocumentSchema,
  ragChunkPageSchema,
  vectorIndexSchema,
  callbackDeliverySchema,
  approvalDeliverySchema,
  approvalDeliveryPauseSchema,
  idempotencyKeySchema,
  scheduleSchema,
  scheduleFireSchema,
  scheduleSkipSchema,
  workflowPauseSchema,
  heldDeliverySchema,
  webhookTriggerSchema,
  webhookHitSchema,
  inboundCallbackSchema,
  evalSuiteSchema,
  evalRunSchema,
  evalResultSchema,
  evalComparisonSchema,
  runActionSchema,
  runActionItemSchema,
  providerBatchSchema,
  providerBatchRowSchema,
  providerBatchAnswerSchema,
  nodeAttemptSchema,
  nodeAttemptRunSchema,
  runCancelRequestSchema,
];
// Once per process: schemas are modules' singletons, and createModels may run more than once.
for (const schema of WORKSPACE_OWNED) schema.plugin(workspaceOwned);

/** Spur's GridFS buckets: each stores its files in `<name>.files` and `<name>.chunks`. */
const BUCKET_NAMES = {
  testFiles: 'test_files',
  runFiles: 'run_files',
  datasetFiles: 'datasets',
  outputFiles: 'output_files',
  ragFiles: 'rag_files',
  ragTexts: 'rag_texts',
} as const;

/** Every model and GridFS bucket of one connection, created once per process. */
export function createModels(conn: Connection) {
  const db = conn.db;
  if (!db) throw new Error('createModels needs an open connection');
  return {
    conn,
    Workflow: conn.model<WorkflowDoc>('Workflow', workflowSchema),
    WorkflowVersion: conn.model<WorkflowVersionDoc>('WorkflowVersion', workflowVersionSchema),
    EnvVar: conn.model<EnvVarDoc>('EnvVar', envVarSchema),
    ModelPrice: conn.model<ModelPriceDoc>('ModelPrice', modelPriceSchema),
    UsageRecord: conn.model<UsageRecordDoc>('UsageRecord', usageRecordSchema),
    UsageRollup: conn.model<UsageRollupDoc>('UsageRollup', usageRollupSchema),
    ProviderLimit: conn.model<ProviderLimitDoc>('ProviderLimit', providerLimitSchema),
    WorkflowBudget: conn.model<WorkflowBudgetDoc>('WorkflowBudget', workflowBudgetSchema),
    McpTool: conn.model<McpToolDoc>('McpTool', mcpToolSchema),
    SpendEntry: conn.model<SpendEntryDoc>('SpendEntry', spendEntrySchema),
    SettingsGeneration: conn.model<SettingsGenerationDoc>('SettingsGeneration', settingsGenerationSchema),
    Run: conn.model<RunDoc>('Run', runSchema),
    RunTasks: conn.model<RunTasksDoc>('RunTasks', runTasksSchema),
    Pause: conn.model<PauseDoc>('Pause', pauseSchema),
    RunEvent: conn.model<RunEventDoc>('RunEvent', runEventSchema),
    TaskDelta: conn.model<TaskDeltaDoc>('TaskDelta', taskDeltaSchema),
    testFiles: new mongo.GridFSBucket(db, { bucketName: BUCKET_NAMES.testFiles }),
    runFiles: new mongo.GridFSBucket(db, { bucketName: BUCKET_NAMES.runFiles }),
    Dataset: conn.model<DatasetDoc>('Dataset', datasetSchema),
    DatasetRow: conn.model<DatasetRowDoc>('DatasetRow', datasetRowSchema),
    OutputFile: conn.model<OutputFileDoc>('OutputFile', outputFileSchema),
    datasetFiles: new mongo.GridFSBucket(db, { bucketName: BUCKET_NAMES.datasetFiles }),
    outputFiles: new mongo.GridFSBucket(db, { bucketName: BUCKET_NAMES.outputFiles }),
    User: conn.model<UserDoc>('User', userSchema),
    Session: conn.model<SessionDoc>('Session', sessionSchema),
    SessionTurn: conn.model<SessionTurnDoc>('SessionTurn', sessionTurnSchema),
    RagCollection: conn.model<RagCollectionDoc>('RagCollection', ragCollectionSchema),
    RagDocument: conn.model<RagDocumentDoc>('RagDocument', ragDocumentSchema),
    RagChunkPage: conn.model<RagChunkPageDoc>('RagChunkPage', ragChunkPageSchema),
    VectorIndex: conn.model<VectorIndexDoc>('VectorIndex', vectorIndexSchema),
    ragFiles: new mongo.GridFSBucket(db, { bucketName: BUCKET_NAMES.ragFiles }),
    ragTexts: new mongo.GridFSBucket(db, { bucketName: BUCKET_NAMES.ragTexts }),
    CallbackDelivery: conn.model<CallbackDeliveryDoc>('CallbackDelivery', callbackDeliverySchema),
    ApprovalDelivery: conn.model<ApprovalDeliveryDoc>('ApprovalDelivery', approvalDeliverySchema),
    ApprovalDeliveryPause: conn.model<ApprovalDeliveryPauseDoc>('ApprovalDeliveryPause', approvalDeliveryPauseSchema),
    IdempotencyKey: conn.model<IdempotencyKeyDoc>('IdempotencyKey', idempotencyKeySchema),
    BrowserSession: conn.model<BrowserSessionDoc>('BrowserSession', browserSessionSchema),
    OidcSignIn: conn.model<OidcSignInDoc>('OidcSignIn', oidcSignInSchema),
    AccessUser: conn.model<AccessUserDoc>('AccessUser', accessUserSchema),
    AccessKey: conn.model<AccessKeyDoc>('AccessKey', accessKeySchema),
    Workspace: conn.model<WorkspaceDoc>('Workspace', workspaceSchema),
    WorkspaceMember: conn.model<WorkspaceMemberDoc>('WorkspaceMember', workspaceMemberSchema),
    AuditEntry: conn.model<AuditEntryDoc>('AuditEntry', auditEntrySchema),
    AuditHead: conn.model<AuditHeadDoc>('AuditHead', auditHeadSchema),
    Schedule: conn.model<ScheduleDoc>('Schedule', scheduleSchema),
    ScheduleFire: conn.model<ScheduleFireDoc>('ScheduleFire', scheduleFireSchema),
    ScheduleSkip: conn.model<ScheduleSkipDoc>('ScheduleSkip', scheduleSkipSchema),
    WorkflowPause: conn.model<WorkflowPauseDoc>('WorkflowPause', workflowPauseSchema),
    HeldDelivery: conn.model<HeldDeliveryDoc>('HeldDelivery', heldDeliverySchema),
    WebhookTrigger: conn.model<WebhookTriggerDoc>('WebhookTrigger', webhookTriggerSchema),
    WebhookHit: conn.model<WebhookHitDoc>('WebhookHit', webhookHitSchema),
    InboundCallback: conn.model<InboundCallbackDoc>('InboundCallback', inboundCallbackSchema),
    ReconcileSuspect: conn.model<ReconcileSuspectDoc>('ReconcileSuspect', reconcileSuspectSchema),
    EvalSuite: conn.model<EvalSuiteDoc>('EvalSuite', evalSuiteSchema),
    EvalRun: conn.model<EvalRunDoc>('EvalRun', evalRunSchema),
    EvalResult: conn.model<EvalResultDoc>('EvalResult', evalResultSchema),
    EvalComparison: conn.model<EvalComparisonDoc>('EvalComparison', evalComparisonSchema),
    RunAction: conn.model<RunActionDoc>('RunAction', runActionSchema),
    RunActionItem: conn.model<RunActionItemDoc>('RunActionItem', runActionItemSchema),
    ProviderBatch: conn.model<ProviderBatchDoc>('ProviderBatch', providerBatchSchema),
    ProviderBatchRow: conn.model<ProviderBatchRowDoc>('ProviderBatchRow', providerBatchRowSchema),
    ProviderBatchAnswer: conn.model<ProviderBatchAnswerDoc>('ProviderBatchAnswer', providerBatchAnswerSchema),
    NodeAttempt: conn.model<NodeAttemptDoc>('NodeAttempt', nodeAttemptSchema),
    NodeAttemptRun: conn.model<NodeAttemptRunDoc>('NodeAttemptRun', nodeAttemptRunSchema),
    RunCancelRequest: conn.model<RunCancelRequestDoc>('RunCancelRequest', runCancelRequestSchema),
  };
}

export type Models = ReturnType<typeof createModels>;

/** Every Mongoose model of `models` (not the GridFS buckets or the connection). */
export function allModels(models: Models): (typeof Model)[] {
  return Object.values(models).filter(
    (m): m is typeof Model => typeof m === 'function' && m.prototype instanceof Model,
  );
}

/** At most this many collections are created at once: FerretDB turns each into DDL on its backend. */
const CREATE_AT_ONCE = 7;

/**
 * A model's collection with every index its schema declares. An index's command creates the
 * collection too, so only a collection without indexes is created on its own. One index per
 * command: FerretDB 1.24 drops the connection on a createIndexes that lists two indexes it has.
 */
async function createWithIndexes(model: typeof Model): Promise<void> {
  const indexes = model.schema.indexes();
  if (indexes.length === 0) return void (await model.createCollection()); // one that exists is no error
  // As Mongoose's own init passes them: Spur's schemas give `unique` as a boolean, never as [true, message].
  for (const [key, options] of indexes)
    await model.collection.createIndex(key as mongo.IndexSpecification, options as mongo.CreateIndexesOptions);
}

/**
 * Creates every collection Spur writes, with its indexes, before the first request or task, so that
 * none is created while runs go on and uniqueness holds from the start. FerretDB on PostgreSQL that
 * loses PostgreSQL in the middle of creating a collection can keep believing the collection absent
 * while its table exists, and then refuses every insert into it ("relation … already exists") until
 * FerretDB restarts: a run whose first output file was being written then could never end.
 */
export async function syncIndexes(models: Models): Promise<void> {
  await eachAtMost(allModels(models), CREATE_AT_ONCE, createWithIndexes);
  const db = models.conn.db;
  if (!db) throw new Error('syncIndexes needs an open connection');
  // The indexes the driver's first upload into a bucket would otherwise create (and, with them, the collections).
  await Promise.all(
    Object.values(BUCKET_NAMES).map(async (name) => {
      await db.collection(`${name}.files`).createIndex({ filename: 1, uploadDate: 1 });
      await db.collection(`${name}.chunks`).createIndex({ files_id: 1, n: 1 }, { unique: true });
    }),
  );
  await Promise.all([
    ensureExpiryIndex(models.IdempotencyKey.collection),
    ensureExpiryIndex(models.BrowserSession.collection),
    ensureExpiryIndex(models.OidcSignIn.collection),
    ensureExpiryIndex(models.WebhookHit.collection),
  ]);
}

import { mongo, type Connection } from 'mongoose';
import { callbackDeliverySchema, type CallbackDeliveryDoc } from './callback-delivery.model';
import { approvalDeliverySchema, type ApprovalDeliveryDoc } from './approval-delivery.model';
import { datasetRowSchema, type DatasetRowDoc } from './dataset-row.model';
import { datasetSchema, type DatasetDoc } from './dataset.model';
import { envVarSchema, type EnvVarDoc } from './env-var.model';
import { modelPriceSchema, type ModelPriceDoc } from './model-price.model';
import { usageRecordSchema, type UsageRecordDoc } from './usage-record.model';
import { providerLimitSchema, type ProviderLimitDoc } from './provider-limit.model';
import { workflowBudgetSchema, type WorkflowBudgetDoc } from './workflow-budget.model';
import { mcpToolSchema, type McpToolDoc } from './mcp-tool.model';
import { spendEntrySchema, type SpendEntryDoc } from './spend-entry.model';
import { browserSessionSchema, type BrowserSessionDoc } from './browser-session.model';
import { ensureExpiryIndex } from './expiry-index';
import { idempotencyKeySchema, type IdempotencyKeyDoc } from './idempotency-key.model';
import { outputFileSchema, type OutputFileDoc } from './output-file.model';
import { pauseSchema, type PauseDoc } from './pause.model';
import { ragCollectionSchema, type RagCollectionDoc } from './rag-collection.model';
import { ragChunkPageSchema, ragDocumentSchema, type RagChunkPageDoc, type RagDocumentDoc } from './rag-document.model';
import { vectorIndexSchema, type VectorIndexDoc } from './vector-index.model';
import { runSchema, type RunDoc } from './run.model';
import { scheduleSchema, type ScheduleDoc } from './schedule.model';
import { scheduleFireSchema, type ScheduleFireDoc } from './schedule-fire.model';
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
import { reconcileSuspectSchema, type ReconcileSuspectDoc } from './reconcile-suspect.model';
import { evalSuiteSchema, type EvalSuiteDoc } from './eval-suite.model';
import { evalRunSchema, type EvalRunDoc } from './eval-run.model';
import { evalResultSchema, type EvalResultDoc } from './eval-result.model';
import { evalComparisonSchema, type EvalComparisonDoc } from './eval-comparison.model';

export type { DatasetDoc, DatasetRowDoc, OutputFileDoc };
export type { RagChunkPageDoc, RagCollectionDoc, RagDocumentDoc, VectorIndexDoc };
export type { EnvVarDoc, PauseDoc, RunDoc, RunTasksDoc, WorkflowDoc, WorkflowVersionDoc };
export type { SessionDoc, SessionTurnDoc, UserDoc };
export type { ApprovalDeliveryDoc, CallbackDeliveryDoc };
export type { RunEventDoc, TaskDeltaDoc };
export type { IdempotencyKeyDoc };
export type { BrowserSessionDoc };
export type { ScheduleDoc, ScheduleFireDoc };
export type { McpToolDoc };
export type { ReconcileSuspectDoc, WebhookHitDoc, WebhookTriggerDoc };
export type { EvalComparisonDoc, EvalResultDoc, EvalRunDoc, EvalSuiteDoc };

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
    ProviderLimit: conn.model<ProviderLimitDoc>('ProviderLimit', providerLimitSchema),
    WorkflowBudget: conn.model<WorkflowBudgetDoc>('WorkflowBudget', workflowBudgetSchema),
    McpTool: conn.model<McpToolDoc>('McpTool', mcpToolSchema),
    SpendEntry: conn.model<SpendEntryDoc>('SpendEntry', spendEntrySchema),
    Run: conn.model<RunDoc>('Run', runSchema),
    RunTasks: conn.model<RunTasksDoc>('RunTasks', runTasksSchema),
    Pause: conn.model<PauseDoc>('Pause', pauseSchema),
    RunEvent: conn.model<RunEventDoc>('RunEvent', runEventSchema),
    TaskDelta: conn.model<TaskDeltaDoc>('TaskDelta', taskDeltaSchema),
    testFiles: new mongo.GridFSBucket(db, { bucketName: 'test_files' }),
    runFiles: new mongo.GridFSBucket(db, { bucketName: 'run_files' }),
    Dataset: conn.model<DatasetDoc>('Dataset', datasetSchema),
    DatasetRow: conn.model<DatasetRowDoc>('DatasetRow', datasetRowSchema),
    OutputFile: conn.model<OutputFileDoc>('OutputFile', outputFileSchema),
    datasetFiles: new mongo.GridFSBucket(db, { bucketName: 'datasets' }),
    outputFiles: new mongo.GridFSBucket(db, { bucketName: 'output_files' }),
    User: conn.model<UserDoc>('User', userSchema),
    Session: conn.model<SessionDoc>('Session', sessionSchema),
    SessionTurn: conn.model<SessionTurnDoc>('SessionTurn', sessionTurnSchema),
    RagCollection: conn.model<RagCollectionDoc>('RagCollection', ragCollectionSchema),
    RagDocument: conn.model<RagDocumentDoc>('RagDocument', ragDocumentSchema),
    RagChunkPage: conn.model<RagChunkPageDoc>('RagChunkPage', ragChunkPageSchema),
    VectorIndex: conn.model<VectorIndexDoc>('VectorIndex', vectorIndexSchema),
    ragFiles: new mongo.GridFSBucket(db, { bucketName: 'rag_files' }),
    ragTexts: new mongo.GridFSBucket(db, { bucketName: 'rag_texts' }),
    CallbackDelivery: conn.model<CallbackDeliveryDoc>('CallbackDelivery', callbackDeliverySchema),
    ApprovalDelivery: conn.model<ApprovalDeliveryDoc>('ApprovalDelivery', approvalDeliverySchema),
    IdempotencyKey: conn.model<IdempotencyKeyDoc>('IdempotencyKey', idempotencyKeySchema),
    BrowserSession: conn.model<BrowserSessionDoc>('BrowserSession', browserSessionSchema),
    Schedule: conn.model<ScheduleDoc>('Schedule', scheduleSchema),
    ScheduleFire: conn.model<ScheduleFireDoc>('ScheduleFire', scheduleFireSchema),
    WebhookTrigger: conn.model<WebhookTriggerDoc>('WebhookTrigger', webhookTriggerSchema),
    WebhookHit: conn.model<WebhookHitDoc>('WebhookHit', webhookHitSchema),
    ReconcileSuspect: conn.model<ReconcileSuspectDoc>('ReconcileSuspect', reconcileSuspectSchema),
    EvalSuite: conn.model<EvalSuiteDoc>('EvalSuite', evalSuiteSchema),
    EvalRun: conn.model<EvalRunDoc>('EvalRun', evalRunSchema),
    EvalResult: conn.model<EvalResultDoc>('EvalResult', evalResultSchema),
    EvalComparison: conn.model<EvalComparisonDoc>('EvalComparison', evalComparisonSchema),
  };
}

export type Models = ReturnType<typeof createModels>;

/** Builds the indexes before the first request, so uniqueness holds from the start. */
export async function syncIndexes(models: Models): Promise<void> {
  await Promise.all([
    models.Workflow.init(),
    models.WorkflowVersion.init(),
    models.EnvVar.init(),
    models.Run.init(),
    models.RunTasks.init(),
    models.Pause.init(),
    models.RunEvent.init(),
  ]);
  await Promise.all([models.Dataset.init(), models.DatasetRow.init(), models.OutputFile.init()]);
  await Promise.all([
    models.User.init(),
    models.Session.init(),
    models.SessionTurn.init(),
    models.RagCollection.init(),
    models.RagDocument.init(),
    models.RagChunkPage.init(),
    models.VectorIndex.init(),
  ]);
  await Promise.all([models.CallbackDelivery.init(), models.ApprovalDelivery.init()]);
  await Promise.all([models.IdempotencyKey.init(), models.BrowserSession.init(), models.Schedule.init()]);
  await models.ScheduleFire.init();
  await Promise.all([models.WebhookTrigger.init(), models.WebhookHit.init(), models.ReconcileSuspect.init()]);
  await Promise.all([models.UsageRecord.init(), models.SpendEntry.init(), models.McpTool.init()]);
  await Promise.all([models.EvalSuite.init(), models.EvalRun.init(), models.EvalResult.init()]);
  await Promise.all([
    ensureExpiryIndex(models.IdempotencyKey.collection),
    ensureExpiryIndex(models.BrowserSession.collection),
    ensureExpiryIndex(models.WebhookHit.collection),
  ]);
}

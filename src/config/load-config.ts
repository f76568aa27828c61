import path from 'node:path';
import { type Env, envSchema, list } from './env';
import { otlpTraceSettings } from './otlp-settings';
import type { Config, OidcSettings } from './settings';
import { SOURCE_TREE } from '../source-tree';

/**
 * The only place that reads `process.env`. Every process parses it once at boot and passes the
 * frozen result down; a bad value stops the process with a message naming the variable.
 */
export class ConfigError extends Error {}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Readonly<Config> {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  return deepFreeze({
    http: {
      host: e.SPUR_HOST,
      port: e.SPUR_PORT,
      maxJsonBytes: e.SPUR_MAX_JSON_BYTES,
      maxUploadBytes: e.SPUR_MAX_UPLOAD_BYTES,
      maxUploadFiles: e.SPUR_MAX_UPLOAD_FILES,
      apiKeyHashes: list(e.SPUR_API_KEY_HASHES),
      signInRequired: signInRequired(e),
      allowInsecure: e.SPUR_ALLOW_INSECURE,
      corsOrigins: list(e.SPUR_CORS_ORIGINS),
      allowedHosts: list(e.SPUR_ALLOWED_HOSTS),
      shutdownDrainMs: e.SPUR_SHUTDOWN_DRAIN_SECONDS * 1000,
      headersTimeoutMs: e.SPUR_HTTP_HEADERS_TIMEOUT_SECONDS * 1000,
      requestTimeoutMs: e.SPUR_HTTP_REQUEST_TIMEOUT_SECONDS * 1000,
      sessionTtlMs: e.SPUR_SESSION_HOURS * 3_600_000,
      login: {
        maxFailures: e.SPUR_LOGIN_MAX_FAILURES,
        windowMs: e.SPUR_LOGIN_WINDOW_SECONDS * 1000,
        trustForwardedFor: e.SPUR_LOGIN_TRUST_FORWARDED_FOR,
      },
    },
    webUi: { enabled: e.SPUR_WEB_UI, dir: e.SPUR_WEB_UI_DIR, consoleDir: e.SPUR_CONSOLE_DIR },
    metrics: { port: e.SPUR_METRICS_PORT ?? null, host: e.SPUR_METRICS_HOST },
    oidc: oidcSettings(e),
    mongo: { uri: e.SPUR_MONGODB_URI, dbName: e.SPUR_MONGODB_DB, timeoutMs: e.SPUR_MONGODB_TIMEOUT_MS },
    temporal: {
      address: e.SPUR_TEMPORAL_ADDRESS,
      namespace: e.SPUR_TEMPORAL_NAMESPACE,
      taskQueue: e.SPUR_TASK_QUEUE,
      workflowIdPrefix: e.SPUR_WORKFLOW_ID_PREFIX,
      workflowBundle: e.SPUR_WORKFLOW_BUNDLE,
      workflowStackTraces: e.SPUR_WORKFLOW_STACK_TRACES,
      activationTimeoutMs: e.SPUR_WORKFLOW_ACTIVATION_TIMEOUT_MS,
      maxActivities: e.SPUR_WORKER_MAX_ACTIVITIES,
      bulkTargetCpu: e.SPUR_BULK_TARGET_CPU,
      fairShare: e.SPUR_FAIR_SHARE,
      shutdownGraceMs: e.SPUR_WORKER_SHUTDOWN_SECONDS * 1000,
    },
    runs: {
      blockingWaitMs: e.SPUR_BLOCKING_RUN_WAIT_SECONDS * 1000,
      actionWaitMs: e.SPUR_PAUSE_ACTION_WAIT_SECONDS * 1000,
      bulkActionRate: e.SPUR_RUN_ACTION_RATE,
      codeParseWaitSeconds: e.SPUR_CODE_PARSE_WAIT_SECONDS,
      batchHistoryEvents: e.SPUR_BATCH_HISTORY_EVENTS,
      batchChunkRows: e.SPUR_BATCH_CHUNK_ROWS,
      providerBatchPollMaxSeconds: e.SPUR_PROVIDER_BATCH_POLL_MAX_SECONDS,
      runHistoryEvents: e.SPUR_RUN_HISTORY_EVENTS,
      batchRowMode: e.SPUR_BATCH_ROW_MODE,
      retentionDays: e.SPUR_RUN_RETENTION_DAYS ?? null,
    },
    datasets: { maxBytes: e.SPUR_MAX_DATASET_BYTES, rowsPerChunk: e.SPUR_DATASET_ROWS_PER_CHUNK },
    parsing: {
      maxBytes: e.SPUR_PARSE_MAX_BYTES,
      timeLimitMs: e.SPUR_PARSE_TIMEOUT_SECONDS * 1000,
      memoryMb: e.SPUR_PARSE_MEMORY_MB,
    },
    values: { refAboveBytes: e.SPUR_VALUE_REF_BYTES, maxBytes: e.SPUR_MAX_VALUE_BYTES },
    limits: {
      agentMaxIterations: e.SPUR_AGENT_MAX_ITERATIONS,
      loopMaxTotalIterations: e.SPUR_LOOP_MAX_TOTAL_ITERATIONS,
      subworkflowMaxDepth: e.SPUR_SUBWORKFLOW_MAX_DEPTH,
    },
    rag: {
      vectorStoreUri: e.SPUR_VECTOR_STORE_URI ?? path.join(e.SPUR_DATA_DIR, 'vectors'),
      annMinRows: e.SPUR_VECTOR_ANN_MIN_ROWS,
    },
    python: {
      sandbox: e.SPUR_PYTHON_SANDBOX,
      interpreter: e.SPUR_PYTHON,
      network: e.SPUR_PYTHON_NETWORK,
      maxMemoryMb: e.SPUR_PYTHON_MAX_MEMORY_MB,
      maxProcesses: e.SPUR_PYTHON_MAX_PROCESSES,
      scratchMb: e.SPUR_PYTHON_SCRATCH_MB,
      maxConcurrent: e.SPUR_PYTHON_MAX_CONCURRENT,
      cgroup: e.SPUR_PYTHON_CGROUP,
      privateDirs: [
        { path: path.resolve(e.SPUR_DATA_DIR), name: 'the data folder (SPUR_DATA_DIR)' },
        { path: SOURCE_TREE, name: "Spur's source tree" },
      ],
    },
    reconcile: { everyMs: e.SPUR_RECONCILE_EVERY_SECONDS * 1000, graceMs: e.SPUR_RECONCILE_GRACE_SECONDS * 1000 },
    outbound: {
      allowPrivate: e.SPUR_OUTBOUND_ALLOW_PRIVATE,
      allowHosts: list(e.SPUR_OUTBOUND_ALLOW_HOSTS),
      maxResponseBytes: e.SPUR_OUTBOUND_MAX_RESPONSE_BYTES,
      idleTimeoutMs: OUTBOUND_IDLE_TIMEOUT_MS,
      maxRedirects: OUTBOUND_MAX_REDIRECTS,
    },
    callbacks: {
      retry: {
        firstRetryMs: e.SPUR_CALLBACK_RETRY_FIRST_SECONDS * 1000,
        maxRetryMs: Math.max(e.SPUR_CALLBACK_RETRY_FIRST_SECONDS, e.SPUR_CALLBACK_RETRY_MAX_SECONDS) * 1000,
        giveUpAfterMs: e.SPUR_CALLBACK_RETRY_HOURS * 3_600_000,
      },
      attemptTimeoutMs: e.SPUR_CALLBACK_TIMEOUT_SECONDS * 1000,
    },
    approvals: {
      publicUrl: e.SPUR_PUBLIC_URL ?? `http://localhost:${e.SPUR_PORT}`,
      linkTtlMs: e.SPUR_APPROVAL_LINK_HOURS * 3_600_000,
      webhookSecret: e.SPUR_APPROVAL_WEBHOOK_SECRET,
    },
    runEvents: {
      keepAliveMs: e.SPUR_EVENT_STREAM_KEEPALIVE_SECONDS * 1000,
      pollMs: e.SPUR_EVENT_STREAM_POLL_MS,
      streams: { max: e.SPUR_EVENT_STREAMS_MAX, perClient: e.SPUR_EVENT_STREAMS_PER_CLIENT },
    },
    idempotency: { ttlMs: e.SPUR_IDEMPOTENCY_TTL_SECONDS * 1000 },
    webhooks: { maxHeldPerWorkflow: e.SPUR_WEBHOOK_MAX_HELD },
    inboundCallbacks: { maxBodyBytes: e.SPUR_INBOUND_CALLBACK_MAX_BYTES },
    dataDir: e.SPUR_DATA_DIR,
    secretKey: e.SPUR_SECRET_KEY,
    log: { level: e.SPUR_LOG_LEVEL, pretty: e.SPUR_PRETTY_LOGS },
    traces: otlpTraceSettings(e),
  });
}

/** A key or a signed-in user is needed: configured keys imply it. */
const signInRequired = (e: Env) => e.SPUR_SIGN_IN_REQUIRED || list(e.SPUR_API_KEY_HASHES).length > 0;

/**
 * The OpenID provider's settings when the issuer, client id and secret are all set; null when none
 * is. One or two of them, or sign-in on a server that requires none (no keys, no
 * SPUR_SIGN_IN_REQUIRED: it serves every request as `local`), stops the process naming what is missing.
 */
function oidcSettings(e: Env): OidcSettings | null {
  const needed = {
    SPUR_OIDC_ISSUER: e.SPUR_OIDC_ISSUER,
    SPUR_OIDC_CLIENT_ID: e.SPUR_OIDC_CLIENT_ID,
    SPUR_OIDC_CLIENT_SECRET: e.SPUR_OIDC_CLIENT_SECRET,
  };
  const missing = Object.keys(needed).filter((name) => needed[name as keyof typeof needed] === undefined);
  if (missing.length === 3) return null;
  const [issuer, clientId, clientSecret] = [e.SPUR_OIDC_ISSUER, e.SPUR_OIDC_CLIENT_ID, e.SPUR_OIDC_CLIENT_SECRET];
  if (issuer === undefined || clientId === undefined || clientSecret === undefined) {
    const set = Object.keys(needed).filter((name) => !missing.includes(name));
    throw new ConfigError(
      `Invalid configuration:\n  OpenID Connect sign-in needs ${missing.join(' and ')} besides ${set.join(' and ')}`,
    );
  }
  if (!signInRequired(e))
    throw new ConfigError(
      'Invalid configuration:\n  SPUR_OIDC_ISSUER needs SPUR_SIGN_IN_REQUIRED=true or SPUR_API_KEY_HASHES: without either every request is served without signing in',
    );
  return {
    issuer,
    clientId,
    clientSecret,
    label: e.SPUR_OIDC_NAME ?? new URL(issuer).host,
    scopes: e.SPUR_OIDC_SCOPES.trim().split(/\s+/).join(' '),
    roleClaim: e.SPUR_OIDC_ROLE_CLAIM,
    defaultRole: e.SPUR_OIDC_DEFAULT_ROLE,
    publicUrl: e.SPUR_PUBLIC_URL,
  };
}

/** A server that sends nothing for a minute is not answering; a slow stream still sends. */
const OUTBOUND_IDLE_TIMEOUT_MS = 60_000;
/** As many as browsers allow in practice for an API; each hop is checked like the first. */
const OUTBOUND_MAX_REDIRECTS = 5;

function deepFreeze<T extends object>(value: T): Readonly<T> {
  for (const v of Object.values(value)) if (v && typeof v === 'object') deepFreeze(v as object);
  return Object.freeze(value);
}

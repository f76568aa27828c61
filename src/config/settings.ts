import type { Role } from '../contracts/roles';
import type { OutboundPolicy } from '../outbound/outbound-fetch';
import type { Env } from './env';
import type { OtlpTraceSettings } from './otlp-settings';

/** Every setting, grouped by what reads it: the frozen result of loadConfig (load-config.ts). */
export interface Config {
  http: {
    host: string;
    port: number;
    maxJsonBytes: number;
    maxUploadBytes: number;
    maxUploadFiles: number;
    apiKeyHashes: string[];
    /** A key or a signed-in user is needed (configured keys, or SPUR_SIGN_IN_REQUIRED); else a keyless loopback instance. */
    signInRequired: boolean;
    allowInsecure: boolean;
    corsOrigins: string[];
    allowedHosts: string[];
    shutdownDrainMs: number;
    headersTimeoutMs: number;
    requestTimeoutMs: number;
    sessionTtlMs: number;
    login: LoginSettings;
  };
  webUi: { enabled: boolean; dir: string; consoleDir: string };
  /** Prometheus metrics (SPUR_METRICS_PORT, SPUR_METRICS_HOST); port null: off. */
  metrics: { port: number | null; host: string };
  /** OpenID Connect sign-in; null: not configured (the login page has no "Sign in with …"). */
  oidc: OidcSettings | null;
  mongo: { uri: string; dbName: string; timeoutMs: number };
  temporal: {
    address: string;
    namespace: string;
    taskQueue: string;
    workflowIdPrefix: string;
    workflowBundle: string | undefined;
    workflowStackTraces: boolean;
    /** SPUR_WORKFLOW_ACTIVATION_TIMEOUT_MS; undefined: workflow code runs without a watchdog (activation-watchdog.ts). */
    activationTimeoutMs: number | undefined;
    maxActivities: number;
    /** The host CPU fraction past which the bulk queue's slots give way (SPUR_BULK_TARGET_CPU). */
    bulkTargetCpu: number;
    /** Priority and fairness keys on every workflow start (SPUR_FAIR_SHARE). */
    fairShare: boolean;
    /** How long a stopping worker lets its running activities finish (SPUR_WORKER_SHUTDOWN_SECONDS). */
    shutdownGraceMs: number;
  };
  runs: {
    blockingWaitMs: number;
    actionWaitMs: number;
    /** Runs a bulk action acts on per second at most (SPUR_RUN_ACTION_RATE). */
    bulkActionRate: number;
    codeParseWaitSeconds: number;
    batchHistoryEvents: number;
    batchChunkRows: number;
    /** SPUR_PROVIDER_BATCH_POLL_MAX_SECONDS. */
    providerBatchPollMaxSeconds: number;
    runHistoryEvents: number;
    batchRowMode: 'auto' | 'child';
    /** Days a finished run is kept after it ended, unless its workflow sets its own; null: forever. */
    retentionDays: number | null;
  };
  datasets: { maxBytes: number; rowsPerChunk: number };
  parsing: ParseLimits;
  values: { refAboveBytes: number; maxBytes: number };
  limits: DefinitionLimits;
  rag: { vectorStoreUri: string; annMinRows: number };
  python: PythonSettings;
  reconcile: { everyMs: number; graceMs: number };
  outbound: OutboundPolicy;
  callbacks: CallbackSettings;
  approvals: ApprovalSettings;
  runEvents: { keepAliveMs: number; pollMs: number; streams: StreamLimits };
  idempotency: { ttlMs: number };
  /** Most deliveries a paused workflow holds (SPUR_WEBHOOK_MAX_HELD). */
  webhooks: { maxHeldPerWorkflow: number };
  /** WaitForCallbackNodes' callbacks: the largest body one takes. */
  inboundCallbacks: { maxBodyBytes: number };
  dataDir: string;
  secretKey: string | undefined;
  log: { level: Env['SPUR_LOG_LEVEL']; pretty: boolean };
  /** Where workers export run traces; null: tracing off (the SDK is never loaded). */
  traces: OtlpTraceSettings | null;
}

/** Open event streams allowed per api process and per client (modules/runs/stream-slots.ts). */
export interface StreamLimits {
  max: number;
  perClient: number;
}

/** Sign-in with an OpenID provider (web-ui/oidc.routes.ts, docs/security.md#single-sign-on). */
export interface OidcSettings {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** The button's "Sign in with <label>": SPUR_OIDC_NAME, else the issuer's host. */
  label: string;
  /** Space-separated, `openid` among them. */
  scopes: string;
  /** The ID token claim naming the user's role; undefined: roles are managed in Spur. */
  roleClaim: string | undefined;
  defaultRole: Role;
  /** SPUR_PUBLIC_URL when set: the base of the redirect URI. Unset: each request's own origin. */
  publicUrl: string | undefined;
}

/** How `/login` limits failed attempts per client address (http/login-attempts.ts). */
export interface LoginSettings {
  maxFailures: number;
  windowMs: number;
  trustForwardedFor: boolean;
}

/** Approval links and their deliveries (docs/approvals.md); deliveries are retried as callbacks are. */
export interface ApprovalSettings {
  publicUrl: string;
  linkTtlMs: number;
  webhookSecret: string | undefined;
}

/** How run callback deliveries are retried and timed out (docs/integrations.md). */
export interface CallbackSettings {
  retry: { firstRetryMs: number; maxRetryMs: number; giveUpAfterMs: number };
  attemptTimeoutMs: number;
}

/** A folder of Spur's that user code must never read: the data folder (the secret key) or the source tree. */
export interface PrivateDir {
  path: string;
  /** How an operator knows it: `the data folder (SPUR_DATA_DIR)`. */
  name: string;
}

/** How PythonFuncNode code runs (src/nodes/code-execution/sandbox.ts). */
export interface PythonSettings {
  sandbox: Env['SPUR_PYTHON_SANDBOX'];
  /** Unset: `python3` on PATH, or the system's when the sandbox user cannot reach that one. */
  interpreter: string | undefined;
  network: Env['SPUR_PYTHON_NETWORK'];
  maxMemoryMb: number;
  maxProcesses: number;
  scratchMb: number;
  maxConcurrent: number;
  cgroup: Env['SPUR_PYTHON_CGROUP'];
  /** Folders no sandbox may show: an environment whose directories hold one is refused. */
  privateDirs: readonly PrivateDir[];
}

/**
 * How far the parse of one uploaded file may go (SPUR_PARSE_*). Documents and dataset files are
 * hostile input: a few kilobytes of DOCX, PDF or Parquet can declare or inflate to gigabytes.
 */
export interface ParseLimits {
  /** Decompressed bytes one file may produce (ZIP entries, PDF streams, Parquet pages), and separately the text or rows extracted from it. */
  maxBytes: number;
  /** Time one parse (with chunking) may take; its thread is then terminated. */
  timeLimitMs: number;
  /** Heap of a parse thread. */
  memoryMb: number;
}

/**
 * The installation's bounds on the work one run of a definition can ask for (SPUR_AGENT_MAX_ITERATIONS,
 * SPUR_LOOP_MAX_TOTAL_ITERATIONS). Unlike the graph rules they are settings, so they are checked
 * where the configuration is at hand: when a definition is saved and when a run of it starts.
 */
export interface DefinitionLimits {
  /** Most model calls one AgentNode may make. */
  agentMaxIterations: number;
  /** Most iterations of nested ForLoopNodes: the product of `num_iterations` along a nesting chain. */
  loopMaxTotalIterations: number;
  /** How deep SubworkflowNodes may nest: a run's child is at depth 1 (SPUR_SUBWORKFLOW_MAX_DEPTH). */
  subworkflowMaxDepth: number;
}

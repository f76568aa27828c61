import { availableParallelism } from 'node:os';
import { z } from 'zod';
import { ROLES } from '../contracts/roles';
import { optionalText, otlpEnv } from './otlp-settings';

/** A comma-separated variable's items, trimmed, empty ones dropped. */
export function list(text: string): string[] {
  return text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

/** `localhost`, an address of 127.0.0.0/8 or `[::1]`: this machine, whatever the network. */
export function isLoopbackHost(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);
}

const bool = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((v) => v === 'true' || v === '1' || v === 'yes');

/** Every variable the processes read, with its bounds and its default (docs/configuration.md). */
export const envSchema = z.object({
  SPUR_HOST: z.string().default('127.0.0.1'),
  SPUR_PORT: z.coerce.number().int().min(0).max(65535).default(6080),
  /** Prometheus metrics on a port of their own (GET /metrics); unset: none. `npm run dev` and `npm run cluster` set it. */
  SPUR_METRICS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  /** Where the metrics port listens: loopback unless a scraper on another host needs it. */
  SPUR_METRICS_HOST: z.string().default('127.0.0.1'),
  SPUR_MONGODB_URI: z.string().default('mongodb://127.0.0.1:27017/'),
  SPUR_MONGODB_DB: z.string().default('spur'),
  SPUR_TEMPORAL_ADDRESS: z.string().default('127.0.0.1:7233'),
  SPUR_TEMPORAL_NAMESPACE: z.string().default('default'),
  SPUR_TASK_QUEUE: z.string().default('spur-runs'),
  /** Prepended to Temporal workflow ids, for installations sharing a namespace. */
  SPUR_WORKFLOW_ID_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_.:-]*$/)
    .default(''),
  SPUR_WORKFLOW_STACK_TRACES: bool.default(false),
  SPUR_WORKFLOW_ACTIVATION_TIMEOUT_MS: z.coerce.number().int().positive().optional(),
  SPUR_DATA_DIR: z.string().default('.data'),
  /** base64 of 32 bytes; when unset, a key is generated once and kept in SPUR_DATA_DIR. */
  SPUR_SECRET_KEY: z.string().optional(),
  SPUR_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** Largest JSON request body (bytes): room for one value at SPUR_MAX_VALUE_BYTES and its envelope. */
  SPUR_MAX_JSON_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(80 * 1024 * 1024),
  SPUR_MAX_UPLOAD_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(50 * 1024 * 1024),
  SPUR_MAX_UPLOAD_FILES: z.coerce.number().int().positive().default(20),
  SPUR_PRETTY_LOGS: bool.default(false),
  /** Comma-separated `sha256:<hex>` digests of the accepted API keys (scripts/hash-api-key.ts). */
  SPUR_API_KEY_HASHES: z.string().default(''),
  /**
   * Require a key or a signed-in user even without SPUR_API_KEY_HASHES: an installation whose
   * people sign in as users (the first admin made by `npm run create-user`). Configured keys imply it.
   */
  SPUR_SIGN_IN_REQUIRED: bool.default(false),
  /** Serve a non-loopback address without API keys anyway (say so explicitly). */
  SPUR_ALLOW_INSECURE: bool.default(false),
  /** Comma-separated other origins trusted for CORS and state changes; default: local development origins when no keys are set, else none. */
  SPUR_CORS_ORIGINS: z.string().default(''),
  /**
   * Comma-separated host names (no port) served besides loopback names and SPUR_HOST. Without keys
   * only those are served (DNS rebinding); with keys any Host is, unless this is set.
   */
  SPUR_ALLOWED_HOSTS: z
    .string()
    .default('')
    .refine(
      (text) => list(text).every((name) => /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)$/.test(name)),
      'host names without a port or scheme, e.g. spur.example.com,[2001:db8::1]',
    ),
  /** A workflow bundle prebuilt by scripts/build-bundle.ts; unset = bundle at worker start. */
  SPUR_WORKFLOW_BUNDLE: z.string().optional(),
  /** How long a blocking run request waits before answering 202 with the run id to poll. */
  SPUR_BLOCKING_RUN_WAIT_SECONDS: z.coerce.number().positive().default(600),
  /** On SIGTERM, how long requests in flight may finish; blocking runs still waiting then answer 202. */
  SPUR_SHUTDOWN_DRAIN_SECONDS: z.coerce.number().positive().default(10),
  /**
   * On SIGTERM a worker stops polling at once and lets the activities it runs finish this long; those
   * still running then are cancelled and retried on another worker.
   */
  SPUR_WORKER_SHUTDOWN_SECONDS: z.coerce.number().positive().max(3600).default(10),
  /** How long a pause action waits for a worker before it is queued (202) to apply later. */
  SPUR_PAUSE_ACTION_WAIT_SECONDS: z.coerce.number().positive().default(5),
  /** Runs a bulk action (POST /api/runs/actions/) acts on per second at most, in pages of 20 per activity. */
  SPUR_RUN_ACTION_RATE: z.coerce.number().int().min(1).max(1000).default(20),
  /** How long workflow code (/api/code_convert/) waits for a worker to run it before the api answers 503. */
  SPUR_CODE_PARSE_WAIT_SECONDS: z.coerce.number().int().min(15).max(3600).default(90),
  /** Largest dataset file accepted by `POST /ds/` (bytes); larger uploads are refused with 413. */
  SPUR_MAX_DATASET_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(200 * 1024 * 1024),
  /**
   * Bytes one uploaded document or dataset file may decompress to (DOCX entries, PDF streams,
   * Parquet pages), and separately the text or rows extracted from it; over it, the file is refused.
   */
  SPUR_PARSE_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .default(256 * 1024 * 1024),
  /** Time the parse (and chunking) of one file may take before its thread is stopped. */
  SPUR_PARSE_TIMEOUT_SECONDS: z.coerce.number().positive().max(3600).default(60),
  /** Heap of each parse thread (two per api and worker process), in MB. */
  SPUR_PARSE_MEMORY_MB: z.coerce.number().int().min(64).max(65_536).default(1024),
  /** Dataset rows stored per document: a batch reads any row range with a few `_id` lookups. */
  SPUR_DATASET_ROWS_PER_CHUNK: z.coerce.number().int().min(1).max(100_000).default(500),
  /**
   * How batch rows run: `auto` (inline in chunk activities unless a row can pause for a human) or
   * `child` (every row its own spurRun workflow: full Temporal history per row, ~100× slower).
   */
  SPUR_BATCH_ROW_MODE: z.enum(['auto', 'child']).default('auto'),
  /** A batch's workflow continues as new once its history has this many events. */
  SPUR_BATCH_HISTORY_EVENTS: z.coerce.number().int().min(10).max(40_000).default(2000),
  /** Rows per inline batch chunk (one activity): each chunk costs a Temporal round trip, a dataset read, an output append and a progress save. */
  SPUR_BATCH_CHUNK_ROWS: z.coerce.number().int().min(1).max(20_000).default(2000),
  /** The longest wait between two polls of a provider batch (llm_mode `provider_batch`); the first is within 5 s. */
  SPUR_PROVIDER_BATCH_POLL_MAX_SECONDS: z.coerce.number().int().min(5).max(3600).default(300),
  /** A run's workflow continues as new (carrying its ended nodes and tasks) once its history has this many events. */
  SPUR_RUN_HISTORY_EVENTS: z.coerce.number().int().min(10).max(40_000).default(10_000),
  /**
   * Finished runs are deleted, with everything they own, this many days after they ended (a
   * workflow may set its own: PUT /api/wf/{id}/retention/); unset: kept forever, as PySpur keeps them.
   * Fractions are allowed.
   */
  SPUR_RUN_RETENTION_DAYS: optionalText.pipe(z.coerce.number<string | undefined>().positive().max(36_525).optional()),
  /** Run inputs, node inputs and outputs whose JSON is larger travel by reference (stored once in GridFS). */
  SPUR_VALUE_REF_BYTES: z.coerce
    .number()
    .int()
    .min(256)
    .max(1024 * 1024)
    .default(128 * 1024),
  /** Largest value a run may carry (an input field, a node output): a request over it gets 413, a node over it fails. */
  SPUR_MAX_VALUE_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(64 * 1024 * 1024),
  /** Most model calls an AgentNode's `max_iterations` may ask for: a workflow over it is refused when saved (422) and when run (400). */
  SPUR_AGENT_MAX_ITERATIONS: z.coerce.number().int().min(1).max(10_000).default(50),
  /** Most iterations of nested ForLoopNodes, multiplied along each nesting chain (checked like the agent cap). */
  SPUR_LOOP_MAX_TOTAL_ITERATIONS: z.coerce.number().int().min(1).max(1_000_000).default(10_000),
  /** How deep SubworkflowNodes may nest (a run's child is depth 1): deeper chains are refused when saved and when run. */
  SPUR_SUBWORKFLOW_MAX_DEPTH: z.coerce.number().int().min(1).max(50).default(5),
  /**
   * Where LanceDB keeps vector indices: a folder (default `<SPUR_DATA_DIR>/vectors`) or object
   * storage (`s3://bucket/prefix`, `gs://…`, `az://…`) shared by every api and worker process.
   */
  SPUR_VECTOR_STORE_URI: z.string().min(1).optional(),
  /** Vector indices with at least this many chunks get an approximate (HNSW) index; smaller ones are searched exactly. */
  SPUR_VECTOR_ANN_MIN_ROWS: z.coerce.number().int().min(1).default(10_000),
  /**
   * How PythonFuncNode code is contained: `bubblewrap` (own PID, network, mount, IPC and user
   * namespaces; runs refuse to start without it) or `off` (a bare python3 process: trusted code only).
   */
  SPUR_PYTHON_SANDBOX: z.enum(['bubblewrap', 'off']).default('bubblewrap'),
  /** The Python environment of user code: an interpreter on PATH or a path (a venv's bin/python). */
  SPUR_PYTHON: z.string().min(1).optional(),
  /** `none`: no network at all; `internet`: outbound through slirp4netns, host loopback unreachable. */
  SPUR_PYTHON_NETWORK: z.enum(['none', 'internet']).default('none'),
  /** Installation maximum of a node's `memory_limit_mb` (a larger value is capped to it). */
  SPUR_PYTHON_MAX_MEMORY_MB: z.coerce.number().int().min(64).max(65_536).default(1024),
  /** Processes plus threads one run may have at once. */
  SPUR_PYTHON_MAX_PROCESSES: z.coerce.number().int().min(8).max(4096).default(64),
  /** Size of the run's writable scratch (/tmp, also the largest file), in MB. */
  SPUR_PYTHON_SCRATCH_MB: z.coerce.number().int().min(1).max(65_536).default(64),
  /**
   * Per-sandbox memory and task caps through cgroups (v2, or v1's memory and pids): `auto` uses them
   * where the worker may create cgroups and says in health where it may not; `required` refuses to
   * run Python nodes without them; `off` leaves them out (caps set per container instead).
   */
  SPUR_PYTHON_CGROUP: z.enum(['auto', 'required', 'off']).default('auto'),
  /** Python sandboxes one worker runs at once; the rest wait (default: the host's cores, at least 2). */
  SPUR_PYTHON_MAX_CONCURRENT: z.coerce.number().int().min(1).max(1024).default(Math.max(2, availableParallelism())),
  /** Activities one worker process runs at once (Temporal's maxConcurrentActivityTaskExecutions). */
  SPUR_WORKER_MAX_ACTIVITIES: z.coerce.number().int().min(1).max(10_000).default(100),
  /**
   * Bulk work (batches, evals, RAG ingests) runs on a task queue of its own; while the main queue
   * has work, bulk slots are handed out only while the host's CPU is below this fraction, so runs
   * someone waits on keep the rest (docs/performance.md#fair-share); 1: bulk takes slots whatever
   * the load, up to the cap above.
   */
  SPUR_BULK_TARGET_CPU: z.coerce.number().gt(0).max(1).default(0.5),
  /**
   * Runs people wait on go before a schedule's fires on the task queue, and workspaces take turns
   * within each class (Temporal priority and fairness keys, src/contracts/work-share.ts); false:
   * first come, first served. Off by default: on 2 saturated cores the keys measured slower for
   * interactive runs beside a batch, not faster (docs/performance.md#fair-share).
   */
  SPUR_FAIR_SHARE: bool.default(false),
  /**
   * How long a MongoDB operation waits for a reachable server: while the database is down, a
   * request answers 503 after this long instead of hanging.
   */
  SPUR_MONGODB_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(5000),
  /** The api cuts a client that has not sent its headers, or its whole request (body included), in this long. */
  SPUR_HTTP_HEADERS_TIMEOUT_SECONDS: z.coerce.number().positive().default(30),
  SPUR_HTTP_REQUEST_TIMEOUT_SECONDS: z.coerce.number().positive().default(300),
  /** How often the reconciler (a Temporal Schedule) looks for runs whose workflow is gone; 0 = never. */
  SPUR_RECONCILE_EVERY_SECONDS: z.coerce.number().min(0).default(60),
  /** A run younger than this is left alone by the reconciler (its api may still be starting it). */
  SPUR_RECONCILE_GRACE_SECONDS: z.coerce.number().min(0).default(120),
  /** Serve PySpur's web UI (fetched by scripts/setup.sh) at `/`. */
  SPUR_WEB_UI: bool.default(true),
  /** Where the UI's static export lives (setup links it here). */
  SPUR_WEB_UI_DIR: z.string().default('.tools/web-ui'),
  /** Spur's console at /console/: the bundle scripts/build-console.ts writes (setup and `npm run build` make it). */
  SPUR_CONSOLE_DIR: z.string().default('dist/console'),
  /** How long a browser login (the session cookie set by `/login`) lasts. */
  SPUR_SESSION_HOURS: z.coerce
    .number()
    .positive()
    .max(24 * 365)
    .default(12),
  /**
   * Server-side requests (integrations, LLM and embedding providers, callbacks) may go to loopback,
   * private, link-local (cloud metadata), CGNAT and unique-local addresses (on in `npm run dev`).
   */
  SPUR_OUTBOUND_ALLOW_PRIVATE: bool.default(false),
  /** `host:port` pairs server-side requests may reach whatever their address (an internal gateway). */
  SPUR_OUTBOUND_ALLOW_HOSTS: z.string().default(''),
  /** Largest answer body of a server-side request, after decompression. */
  SPUR_OUTBOUND_MAX_RESPONSE_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(64 * 1024 * 1024),
  /** Failed logins at `/login` one client address may make per window; then it gets 429 (counted per api process, in memory). */
  SPUR_LOGIN_MAX_FAILURES: z.coerce.number().int().min(1).max(10_000).default(10),
  SPUR_LOGIN_WINDOW_SECONDS: z.coerce.number().positive().max(86_400).default(60),
  /**
   * Count login failures per the last `X-Forwarded-For` address (the one a single reverse proxy in
   * front appends) instead of the connection's: set only when every request comes through that proxy.
   */
  SPUR_LOGIN_TRUST_FORWARDED_FOR: bool.default(false),
  /**
   * OpenID Connect sign-in (docs/security.md#single-sign-on): the provider's issuer, https (http
   * only on a loopback host). With the client id and secret set too, the login page offers
   * "Sign in with …"; one or two of the three is a startup error.
   */
  SPUR_OIDC_ISSUER: optionalText.pipe(
    z
      .url({ protocol: /^https?$/ })
      .refine(
        (url) => url.startsWith('https:') || isLoopbackHost(new URL(url).hostname),
        'https, or http on a loopback host (localhost, 127.0.0.1, [::1])',
      )
      .optional(),
  ),
  /** The client Spur is registered as at the provider (its redirect URI: `<public URL>/login/oidc/callback`). */
  SPUR_OIDC_CLIENT_ID: optionalText,
  SPUR_OIDC_CLIENT_SECRET: optionalText,
  /** The provider's name on the button ("Sign in with <name>"); unset: the issuer's host. */
  SPUR_OIDC_NAME: optionalText.pipe(z.string().max(80).optional()),
  /** Scopes asked for, space-separated; `openid` among them. */
  SPUR_OIDC_SCOPES: z
    .string()
    .default('openid profile email')
    .refine((text) => text.split(/\s+/).includes('openid'), 'space-separated scopes, `openid` among them'),
  /**
   * The ID token claim whose value names the user's role (a role name, or a list of them: the
   * strongest counts). Set, every sign-in sets the role from it; unset, roles are managed in Spur.
   */
  SPUR_OIDC_ROLE_CLAIM: optionalText,
  /** The role of a user the claim names no role for (or of every new user, without a claim). */
  SPUR_OIDC_DEFAULT_ROLE: z.enum(ROLES).default('viewer'),
  /** How long a callback delivery is retried (network errors, 5xx, 429) before it is given up. */
  SPUR_CALLBACK_RETRY_HOURS: z.coerce
    .number()
    .positive()
    .max(24 * 30)
    .default(24),
  /** First wait between two attempts of a delivery; it doubles up to SPUR_CALLBACK_RETRY_MAX_SECONDS. */
  SPUR_CALLBACK_RETRY_FIRST_SECONDS: z.coerce.number().positive().default(5),
  SPUR_CALLBACK_RETRY_MAX_SECONDS: z.coerce.number().positive().default(900),
  /** How long one delivery attempt (one POST) may take. */
  SPUR_CALLBACK_TIMEOUT_SECONDS: z.coerce.number().positive().max(100).default(15),
  /**
   * This server's address as the people approving reach it (scheme, host, port, path prefix): the
   * base of the approval links sent by Slack, e-mail and webhooks. Unset: `http://localhost:<SPUR_PORT>`.
   */
  SPUR_PUBLIC_URL: z
    .url({ protocol: /^https?$/ })
    .optional()
    .transform((url) => url?.replace(/\/+$/, '')),
  /** How long an approval link stays valid when its pause has no timeout (a pause's timeout ends its links earlier). */
  SPUR_APPROVAL_LINK_HOURS: z.coerce
    .number()
    .positive()
    .max(24 * 365)
    .default(24 * 7),
  /** Signs the approval webhooks (`X-Spur-Signature`, as callbacks are signed); unset, webhook notifications are refused. */
  SPUR_APPROVAL_WEBHOOK_SECRET: z.string().min(16).optional(),
  /** Comment lines an event stream (`GET /run/{id}/events/`) sends this often, so proxies keep it open. */
  SPUR_EVENT_STREAM_KEEPALIVE_SECONDS: z.coerce.number().positive().default(15),
  /** How often the api's watcher of a streamed run looks for its next event (one `_id` lookup per run). */
  SPUR_EVENT_STREAM_POLL_MS: z.coerce.number().int().min(10).max(60_000).default(200),
  /** Event streams one api process keeps open at once (each holds a connection and a share of a run's watcher); more get 429. */
  SPUR_EVENT_STREAMS_MAX: z.coerce.number().int().min(1).max(1_000_000).default(1000),
  /** Event streams one client (an API key; without keys, an address) may have open on one api process at once. */
  SPUR_EVENT_STREAMS_PER_CLIENT: z.coerce.number().int().min(1).max(1_000_000).default(20),
  /** How long an `Idempotency-Key` of a run route or pause action is remembered (its replays answer the first request). */
  SPUR_IDEMPOTENCY_TTL_SECONDS: z.coerce
    .number()
    .positive()
    .max(365 * 86_400)
    .default(86_400),
  /** Most webhook deliveries one paused workflow holds until it is resumed; past it a delivery is answered 429. */
  SPUR_WEBHOOK_MAX_HELD: z.coerce.number().int().min(1).max(1_000_000).default(10_000),
  /**
   * Largest body a WaitForCallbackNode's callback takes (413 past it). At most 128 KiB: the body
   * travels to the run's workflow in a signal and becomes the node's output as it is.
   */
  SPUR_INBOUND_CALLBACK_MAX_BYTES: z.coerce.number().int().min(1024).max(131_072).default(65_536),
  /** OpenTelemetry trace export (OTLP over HTTP, protobuf): the SDK's standard variables, off unless an endpoint is set. */
  ...otlpEnv,
});

export type Env = z.output<typeof envSchema>;

/** Every variable the processes read (.env.example must document each: test/deploy). */
export const CONFIG_VARIABLES: readonly string[] = Object.freeze(Object.keys(envSchema.shape));

/**
 * Each variable's value when the environment leaves it unset (undefined: no default here, the
 * setting is derived or off). docs/configuration.md states them: test/unit/docs.test.ts compares.
 */
export function settingDefaults(): Readonly<Record<string, unknown>> {
  return envSchema.parse({});
}

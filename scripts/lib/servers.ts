// Start the dev servers (Temporal CLI dev server, FerretDB v1 on SQLite) on loopback ports.
// Options are plain data: pass the same object again to restart on the same files.
import { execFile } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { assertPortFree, waitForTcp } from './ports';
import { spawnManaged, type ManagedProcess } from './processes';
import { resolveTool } from './tools';
import { SEARCH_ATTRIBUTE_TYPES } from '../../src/contracts/search-attributes';

/** What every Spur dev/test Temporal server needs: the custom search attributes runs set. */
export const TEMPORAL_DEV_OPTIONS = {
  searchAttributes: SEARCH_ATTRIBUTE_TYPES,
  // The server hands a node's activity back in the workflow task's completion when the worker has
  // a free slot (off by default on the server), instead of dispatching it through a task queue.
  // Tasks that do go through a queue (a run the api starts without a worker of its own, an
  // activity no slot took) leave the history service's transfer queue, which reads new tasks at
  // most 20 times a second by default: measured, a workflow started without eager start then waits
  // ~40 ms for its first workflow task (bare workflow p50 49.7 → 13.6 ms, bench/temporal-floor.ts).
  // Matching hands out tasks by the priority and fairness keys runs carry (src/contracts/work-share.ts):
  // without it the server ignores them and one workspace's batch queues ahead of everyone's runs.
  dynamicConfig: {
    'system.enableActivityEagerExecution': true,
    'history.transferProcessorMaxPollRPS': 1000,
    'matching.enableFairness': true,
  },
} satisfies Partial<TemporalOptions>;

/** `metrics`: the api's metrics port (the worker's, when it runs apart, the next one). */
export const DEFAULT_DEV_PORTS = { temporal: 7233, temporalUi: 8233, ferret: 27017, api: 6080, metrics: 9464 } as const;

const HOST = '127.0.0.1';

export type SearchAttributeType = 'Keyword' | 'Text' | 'Int' | 'Double' | 'Bool' | 'Datetime' | 'KeywordList';

export interface TemporalOptions {
  port: number;
  /** Web UI port; null or omitted = headless (the CLI default, port+1000, could clash in tests). */
  uiPort?: number | null;
  /** SQLite file; keeping it keeps workflow histories across restarts. */
  dbFile: string;
  namespace?: string;
  logFile?: string;
  searchAttributes?: Record<string, SearchAttributeType>;
  dynamicConfig?: Record<string, string | number | boolean>;
  /** SQLite durability; see SqliteSync. */
  sqliteSync?: SqliteSync;
  startTimeoutMs?: number;
}

export interface TemporalServer {
  address: string;
  uiUrl: string | null;
  handle: ManagedProcess;
  options: TemporalOptions;
}

/**
 * How the dev servers' SQLite files commit. 'normal' (the default): WAL, fsync at checkpoints
 * only; a killed process loses nothing (commits are in the OS's cache), a power cut may lose the
 * last commits, which a dev stack can afford. 'full': fsync on every commit (SQLite's default),
 * for measuring what that costs (BENCH_SQLITE_SYNC=full).
 */
export type SqliteSync = 'normal' | 'full';

const syncsAtCheckpoints = (o: { sqliteSync?: SqliteSync }) => (o.sqliteSync ?? 'normal') === 'normal';

export interface FerretDbOptions {
  port: number;
  /** Holds one <db>.sqlite file per database plus FerretDB's state.json. */
  dataDir: string;
  logFile?: string;
  sqliteSync?: SqliteSync;
  startTimeoutMs?: number;
}

export interface FerretDbServer {
  uri: string;
  handle: ManagedProcess;
  options: FerretDbOptions;
}

/** Environment without TEMPORAL_* variables: a user's cloud address/TLS/API key must not leak in. */
function cleanEnv(): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = {};
  for (const key of Object.keys(process.env)) if (key.startsWith('TEMPORAL_')) env[key] = undefined;
  return env;
}

export function temporalArgs(o: TemporalOptions): string[] {
  const args = ['server', 'start-dev', '--ip', HOST, '--port', String(o.port)];
  args.push('--db-filename', path.resolve(o.dbFile), '--namespace', o.namespace ?? 'default');
  args.push('--log-level', 'warn'); // info floods the console with routine server chatter
  // Temporal's file mode uses SQLite's rollback journal with an fsync per commit: every workflow
  // task paid for several.
  if (syncsAtCheckpoints(o)) args.push('--sqlite-pragma', 'journal_mode=wal', '--sqlite-pragma', 'synchronous=normal');
  if (o.uiPort == null) args.push('--headless');
  else args.push('--ui-port', String(o.uiPort));
  for (const [key, type] of Object.entries(o.searchAttributes ?? {})) {
    args.push('--search-attribute', `${key}=${type}`);
  }
  // The CLI parses each value as JSON, so strings need their quotes.
  for (const [key, value] of Object.entries(o.dynamicConfig ?? {})) {
    args.push('--dynamic-config-value', `${key}=${JSON.stringify(value)}`);
  }
  return args;
}

export function ferretDbArgs(o: FerretDbOptions): string[] {
  const dir = path.resolve(o.dataDir);
  return [
    '--handler=sqlite',
    // A directory URL (the trailing slash is required); FerretDB already uses WAL.
    `--sqlite-url=${pathToFileURL(dir).href}/${syncsAtCheckpoints(o) ? '?_pragma=synchronous(normal)' : ''}`,
    `--listen-addr=${HOST}:${o.port}`,
    `--state-dir=${dir}`, // default is the cwd
    '--debug-addr=-', // default 127.0.0.1:8088 would clash between instances
    '--telemetry=disable',
    '--log-level=error', // warn dumps every unsupported command (e.g. endSessions on each disconnect)
  ];
}

/** Runs `check` until it resolves, failing early (and killing the process) if it dies or the check fails. */
export async function waitUntilUp(
  handle: ManagedProcess,
  what: string,
  logFile: string | undefined,
  check: Promise<void>,
): Promise<void> {
  const died = handle.exited.then((code) => {
    const where = logFile ? `; see ${logFile}` : '';
    throw new Error(`${what} exited with code ${code} while starting${where}`);
  });
  try {
    await Promise.race([check, died]);
  } catch (err) {
    await handle.stop('SIGKILL', 0);
    throw err;
  }
}

function namespaceReady(bin: string, address: string, namespace: string): Promise<boolean> {
  return new Promise((resolve) => {
    const args = ['operator', 'namespace', 'describe', '--namespace', namespace, '--address', address];
    const env = { ...process.env, ...cleanEnv() };
    execFile(bin, args, { timeout: 5000, env }, (err) => resolve(err === null));
  });
}

export async function startTemporal(options: TemporalOptions): Promise<TemporalServer> {
  const bin = resolveTool('temporal');
  const timeoutMs = options.startTimeoutMs ?? 60_000;
  const address = `${HOST}:${options.port}`;
  const namespace = options.namespace ?? 'default';
  // Otherwise a server already on the port would pass the readiness checks below.
  await assertPortFree(HOST, options.port, 'Temporal');
  if (options.uiPort != null) await assertPortFree(HOST, options.uiPort, 'Temporal UI');
  mkdirSync(path.dirname(path.resolve(options.dbFile)), { recursive: true });
  const args = temporalArgs(options);
  const handle = spawnManaged({ name: 'temporal', command: bin, args, env: cleanEnv(), logFile: options.logFile });

  const ready = (async () => {
    const deadline = Date.now() + timeoutMs;
    await waitForTcp(HOST, options.port, timeoutMs);
    // The frontend accepts connections before namespaces are loaded; poll until ours answers.
    while (!(await namespaceReady(bin, address, namespace))) {
      if (Date.now() > deadline || !handle.running) {
        throw new Error(`Temporal namespace '${namespace}' not ready after ${timeoutMs} ms`);
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    if (options.uiPort != null) await waitForTcp(HOST, options.uiPort, Math.max(deadline - Date.now(), 1000));
  })();
  await waitUntilUp(handle, `Temporal (${address})`, options.logFile, ready);
  const uiUrl = options.uiPort == null ? null : `http://${HOST}:${options.uiPort}`;
  return { address, uiUrl, handle, options };
}

export async function startFerretDb(options: FerretDbOptions): Promise<FerretDbServer> {
  const bin = resolveTool('ferretdb');
  await assertPortFree(HOST, options.port, 'FerretDB');
  mkdirSync(path.resolve(options.dataDir), { recursive: true });
  const args = ferretDbArgs(options);
  const handle = spawnManaged({ name: 'ferretdb', command: bin, args, logFile: options.logFile });
  const ready = waitForTcp(HOST, options.port, options.startTimeoutMs ?? 30_000);
  await waitUntilUp(handle, `FerretDB (${HOST}:${options.port})`, options.logFile, ready);
  return { uri: `mongodb://${HOST}:${options.port}/`, handle, options };
}

/** Graceful stop, then start again with the same options (same SQLite files, same port). */
export async function restartTemporal(server: TemporalServer): Promise<TemporalServer> {
  await server.handle.stop();
  return startTemporal(server.options);
}

export async function restartFerretDb(server: FerretDbServer): Promise<FerretDbServer> {
  await server.handle.stop();
  return startFerretDb(server.options);
}

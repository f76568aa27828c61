// The benchmark's own stack, like scripts/test.ts: Temporal dev server (with Spur's search
// attributes) and FerretDB on free loopback ports with fresh data, a prebuilt workflow bundle,
// then the api (src/processes/api.ts) and one worker (src/processes/worker.ts) as separate processes, so each
// one's CPU can be read from /proc. Everything stops again in `stop()`, which is safe to repeat.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { distEntry } from '../../scripts/build';
import { buildWorkflowBundle } from '../../scripts/build-bundle';
import { freePort, waitForTcp } from '../../scripts/lib/ports';
import { type ManagedProcess, spawnManaged } from '../../scripts/lib/processes';
import { type SqliteSync, TEMPORAL_DEV_OPTIONS, startFerretDb, startTemporal } from '../../scripts/lib/servers';
import { REPO_ROOT } from '../../scripts/lib/tools';

export interface StackOptions {
  tmpDir: string;
  /** Extra `--dynamic-config-value` entries for the Temporal dev server. */
  temporalDynamicConfig?: Record<string, string | number | boolean>;
  /** Extra environment for the api and the worker (e.g. a knob under test). */
  extraEnv?: Record<string, string>;
  /** Overrides BENCH_TOPOLOGY (benches that measure both). */
  topology?: Topology;
  /** The MongoDB URI the api and the worker get, given FerretDB's (a counting proxy in between). */
  mongoUri?: (ferretUri: string) => Promise<string>;
  /** Run the compiled files in dist/ (built by the caller), as the image and the cluster do, not tsx. */
  compiled?: boolean;
  /**
   * Another build's source tree (a worktree of an earlier commit, its node_modules beside it): its api
   * and worker run too, on the same servers, so a bench can compare two builds in one run (`Stack.baseline`).
   */
  baseline?: { root: string };
}

export interface Stack {
  apiUrl: string;
  /** Environment of the api and the worker: same database, task queue and key. */
  env: Record<string, string>;
  /** Process-group ids by name, for CPU sampling. */
  groups: Record<'api' | 'temporal' | 'ferretdb', number> & { worker?: number };
  /** The baseline build's apps (StackOptions.baseline), on the same servers. */
  baseline?: Apps;
  startSeconds: number;
  stop(): Promise<void>;
}

const readLog = (file: string) => {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
};

/**
 * `node --import tsx <entry>`, or `node dist/<entry>.js` when compiled: one process per role (the tsx
 * CLI would add a wrapper process). `root`: the source tree it runs from (another build's, a baseline).
 */
function spawnNode(
  name: string,
  entry: string,
  env: Record<string, string>,
  logFile: string,
  compiled = false,
  root = REPO_ROOT,
): ManagedProcess {
  // BENCH_CPU_PROF_DIR: V8 CPU profiles of the api and the worker, written when they stop.
  const profDir = process.env.BENCH_CPU_PROF_DIR;
  const profile = profDir ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(profDir)}`] : [];
  return spawnManaged({
    name,
    command: process.execPath,
    args: [...profile, ...(compiled ? [distEntry(entry)] : ['--import', 'tsx', path.join(root, entry)])],
    env,
    cwd: root,
    logFile,
  });
}

async function waitForLog(child: ManagedProcess, logFile: string, text: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!readLog(logFile).includes(text)) {
    if (!child.running) throw new Error(`${child.name} exited during start:\n${readLog(logFile).slice(-3000)}`);
    if (Date.now() > deadline)
      throw new Error(`${child.name} did not start in ${timeoutMs} ms:\n${readLog(logFile).slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * BENCH_TOPOLOGY: `split` (default, production's shape: src/processes/api.ts and src/processes/worker.ts as two
 * processes) or `combined` (src/processes/combined.ts: one process, runs start eagerly).
 */
export type Topology = 'split' | 'combined';
export function topologyEnv(): Topology {
  const raw = process.env.BENCH_TOPOLOGY ?? 'split';
  if (raw !== 'split' && raw !== 'combined') throw new Error(`BENCH_TOPOLOGY=${raw}: expected split or combined`);
  return raw;
}

/** BENCH_SQLITE_SYNC=full measures the dev servers with an fsync per commit (SQLite's default). */
export function sqliteSyncEnv(): SqliteSync {
  const raw = process.env.BENCH_SQLITE_SYNC ?? 'normal';
  if (raw !== 'normal' && raw !== 'full') throw new Error(`BENCH_SQLITE_SYNC=${raw}: expected normal or full`);
  return raw;
}

/** Where an api (and worker) run from: this tree, or another build's (`name` tells their files and database apart). */
interface AppBuild {
  name: string;
  root: string;
  /** A prebuilt workflow bundle; without one the worker bundles its own tree's workflows as it starts. */
  bundle?: string;
}

/** A build's api, and its worker in the split topology, on the stack's servers with a database and task queue of its own. */
export interface Apps {
  apiUrl: string;
  env: Record<string, string>;
  groups: { api: number; worker?: number };
}

async function startApps(
  options: {
    build: AppBuild;
    topology: Topology;
    tmpDir: string;
    compiled?: boolean;
    extraEnv?: Record<string, string>;
    handles: ManagedProcess[];
  },
  servers: { mongoUri: string; temporalAddress: string },
): Promise<Apps> {
  const { build, tmpDir, handles } = options;
  const suffix = build.name ? `-${build.name}` : '';
  const apiPort = await freePort();
  const env: Record<string, string> = {
    SPUR_MONGODB_URI: servers.mongoUri,
    SPUR_MONGODB_DB: `spur_bench${suffix.replace('-', '_')}`,
    SPUR_TEMPORAL_ADDRESS: servers.temporalAddress,
    SPUR_TASK_QUEUE: `spur-bench${suffix}`,
    // Run ids are numbered per database: each build's runs need workflow ids of their own.
    SPUR_WORKFLOW_ID_PREFIX: build.name ? `${build.name}-` : '',
    SPUR_SECRET_KEY: randomBytes(32).toString('base64'),
    SPUR_DATA_DIR: path.join(tmpDir, `data${suffix}`),
    SPUR_LOG_LEVEL: 'info',
    ...options.extraEnv,
  };
  const bundleEnv: Record<string, string> = build.bundle ? { SPUR_WORKFLOW_BUNDLE: build.bundle } : {};
  const apiLog = path.join(tmpDir, `api${suffix}.log`);
  const apiEnv = { ...env, SPUR_HOST: '127.0.0.1', SPUR_PORT: String(apiPort), ...bundleEnv };
  const spawn = (name: string, entry: string, processEnv: Record<string, string>, log: string) => {
    const child = spawnNode(name, entry, processEnv, log, options.compiled, build.root);
    handles.push(child);
    return child;
  };
  let groups: Apps['groups'];
  if (options.topology === 'combined') {
    const api = spawn('api', 'src/processes/combined.ts', apiEnv, apiLog);
    await waitForLog(api, apiLog, 'api listening', 120_000);
    groups = { api: api.pid };
  } else {
    const workerLog = path.join(tmpDir, `worker${suffix}.log`);
    const worker = spawn('worker', 'src/processes/worker.ts', { ...env, ...bundleEnv }, workerLog);
    const api = spawn('api', 'src/processes/api.ts', apiEnv, apiLog);
    await Promise.all([
      waitForLog(worker, workerLog, 'worker running', 120_000),
      waitForLog(api, apiLog, 'api listening', 120_000),
    ]);
    groups = { api: api.pid, worker: worker.pid };
  }
  await waitForTcp('127.0.0.1', apiPort, 10_000);
  return { apiUrl: `http://127.0.0.1:${apiPort}/api`, env, groups };
}

export async function startStack(options: StackOptions): Promise<Stack> {
  const started = Date.now();
  const { tmpDir } = options;
  const handles: ManagedProcess[] = [];
  // Servers are stopped last: the worker drains against them.
  const stop = async () => {
    const [servers, apps] = [
      handles.filter((h) => h.name === 'temporal' || h.name === 'ferretdb'),
      handles.filter((h) => h.name === 'api' || h.name === 'worker'),
    ];
    await Promise.allSettled(apps.map((h) => h.stop('SIGTERM', 15_000)));
    await Promise.allSettled(servers.map((h) => h.stop()));
  };
  try {
    const [ferretPort, temporalPort] = [await freePort(), await freePort()];
    const sqliteSync = sqliteSyncEnv();
    const keep = <T extends { handle: ManagedProcess }>(server: T): T => {
      handles.push(server.handle);
      return server;
    };
    // The bundle builds while the servers come up; each server is registered for stop() as soon as it is up.
    const [ferret, temporal, bundle] = await Promise.all([
      startFerretDb({
        port: ferretPort,
        dataDir: path.join(tmpDir, 'ferretdb'),
        logFile: path.join(tmpDir, 'ferretdb.log'),
        sqliteSync,
      }).then(keep),
      startTemporal({
        ...TEMPORAL_DEV_OPTIONS,
        port: temporalPort,
        uiPort: null,
        dbFile: path.join(tmpDir, 'temporal.db'),
        logFile: path.join(tmpDir, 'temporal.log'),
        sqliteSync,
        dynamicConfig: { ...TEMPORAL_DEV_OPTIONS.dynamicConfig, ...options.temporalDynamicConfig },
      }).then(keep),
      buildWorkflowBundle(path.join(tmpDir, 'workflow-bundle.js')),
    ]);

    const mongoUri = options.mongoUri ? await options.mongoUri(ferret.uri) : ferret.uri;
    const topology = options.topology ?? topologyEnv();
    const apps = (build: AppBuild) =>
      startApps(
        { build, topology, tmpDir, compiled: options.compiled, extraEnv: options.extraEnv, handles },
        {
          mongoUri,
          temporalAddress: temporal.address,
        },
      );
    const main = await apps({ name: '', root: REPO_ROOT, bundle });
    const servers = { temporal: temporal.handle.pid, ferretdb: ferret.handle.pid };
    return {
      apiUrl: main.apiUrl,
      env: main.env,
      groups: { ...main.groups, ...servers },
      ...(options.baseline ? { baseline: await apps({ name: 'baseline', root: options.baseline.root }) } : {}),
      startSeconds: (Date.now() - started) / 1000,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/**
 * A benchmark's entry point: its own stack in a fresh temporary folder, stopped and removed however
 * the body ends; a failure sets the exit code.
 */
export function runWithStack(
  tmpPrefix: string,
  body: (stack: Stack) => Promise<void>,
  options: Omit<StackOptions, 'tmpDir'> = {},
): void {
  const main = async () => {
    const tmp = mkdtempSync(path.join(os.tmpdir(), tmpPrefix));
    let stack: Stack | undefined;
    try {
      stack = await startStack({ ...options, tmpDir: tmp });
      await body(stack);
    } finally {
      await stack?.stop();
      rmSync(tmp, { recursive: true, force: true });
    }
  };
  void main().catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  });
}

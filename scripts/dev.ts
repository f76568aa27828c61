// `npm run dev`: Temporal dev server + FerretDB + the api hosting a worker (the single-process
// topology, the fastest correct shape on one host: runs start eagerly), output prefixed per process.
// SPUR_DEV_TOPOLOGY=split runs production's shape instead: the api and a worker as two processes.
// Data lives in .data/ (git-ignored) so runs and documents survive restarts.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { waitForTcp } from './lib/ports';
import type { ManagedProcess } from './lib/processes';
import { DEFAULT_RESTART_POLICY, type RestartPolicy, type Supervised, supervise } from './lib/supervisor';
import { DEFAULT_DEV_PORTS, TEMPORAL_DEV_OPTIONS, startFerretDb, startTemporal } from './lib/servers';
import { REPO_ROOT } from './lib/tools';

export interface DevOptions {
  dataDir?: string;
  /** `combined` (default): the api hosts the worker; `split`: production's two processes. */
  topology?: DevTopology;
  /** Internal: replace `tsx src/processes/worker.ts` / the api's entry (tests of this script). */
  workerCommand?: readonly string[];
  apiCommand?: readonly string[];
  /** How the worker and the api are restarted when they die (tests shorten it). */
  restartPolicy?: RestartPolicy;
}

function envPort(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`${name}=${raw} is not a TCP port`);
  return port;
}

export type DevTopology = 'combined' | 'split';

function envTopology(): DevTopology {
  const raw = process.env.SPUR_DEV_TOPOLOGY || 'combined';
  if (raw !== 'combined' && raw !== 'split') throw new Error(`SPUR_DEV_TOPOLOGY=${raw}: expected combined or split`);
  return raw;
}

/** The api's entry, and the worker's when it runs apart: what each topology starts. */
export const DEV_ENTRIES = {
  combined: { api: 'src/processes/combined.ts', worker: null },
  split: { api: 'src/processes/api.ts', worker: 'src/processes/worker.ts' },
} as const satisfies Record<DevTopology, { api: string; worker: string | null }>;

const say = (line: string): void => void process.stdout.write(`[dev]      ${line}\n`);

/** Runs until a signal or a crash; resolves with the exit code. */
export async function runDev(options: DevOptions = {}): Promise<number> {
  const ports = {
    api: envPort('SPUR_PORT', DEFAULT_DEV_PORTS.api),
    temporal: envPort('SPUR_TEMPORAL_PORT', DEFAULT_DEV_PORTS.temporal),
    temporalUi: envPort('SPUR_TEMPORAL_UI_PORT', DEFAULT_DEV_PORTS.temporalUi),
    ferret: envPort('SPUR_FERRETDB_PORT', DEFAULT_DEV_PORTS.ferret),
    metrics: envPort('SPUR_METRICS_PORT', DEFAULT_DEV_PORTS.metrics),
  };
  const dataDir = path.resolve(options.dataDir ?? (process.env.SPUR_DATA_DIR || path.join(REPO_ROOT, '.data')));
  mkdirSync(dataDir, { recursive: true });
  // The same node binary runs tsx directly: no npx layer, and one node version for all.
  const tsx = (file: string): string[] => [process.execPath, require.resolve('tsx/cli'), file];
  const topology = options.topology ?? envTopology();
  const entries = DEV_ENTRIES[topology];
  const workerCommand = options.workerCommand ?? (entries.worker ? tsx(entries.worker) : undefined);
  const apiCommand = options.apiCommand ?? tsx(entries.api);
  say(
    topology === 'combined'
      ? 'topology: combined (the api hosts the worker; SPUR_DEV_TOPOLOGY=split for two processes)'
      : 'topology: split (api and worker apart, as in production)',
  );

  const apps: Supervised[] = []; // stopped first
  const servers: ManagedProcess[] = [];
  let finish: (code: number) => void = () => undefined;
  const finished = new Promise<number>((resolve) => (finish = resolve));
  let shuttingDown = false;

  const shutdown = async (code: number, reason: string): Promise<void> => {
    if (shuttingDown) return;
    shuttingDown = true;
    say(`${reason}; stopping…`);
    await Promise.all(apps.map((p) => p.stop('SIGTERM', 10_000)));
    await Promise.all(servers.map((p) => p.stop('SIGTERM', 10_000)));
    finish(code);
  };
  const onSignal = (signal: NodeJS.Signals): void => {
    if (!shuttingDown) return void shutdown(0, `${signal} received`);
    say('second signal: killing everything now');
    for (const p of [...apps.map((a) => a.current), ...servers]) p.kill('SIGKILL');
    finish(130);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const watch = (p: ManagedProcess): void => {
    void p.exited.then((code) => shutdown(1, `${p.name} exited unexpectedly (code ${code})`));
  };

  try {
    const [temporalResult, ferretResult] = await Promise.allSettled([
      startTemporal({
        ...TEMPORAL_DEV_OPTIONS,
        port: ports.temporal,
        uiPort: ports.temporalUi,
        dbFile: path.join(dataDir, 'temporal.db'),
      }),
      startFerretDb({ port: ports.ferret, dataDir: path.join(dataDir, 'ferretdb') }),
    ]);
    // Track whatever started, so a failure of the other one (or Ctrl-C meanwhile) stops it too.
    for (const r of [temporalResult, ferretResult]) if (r.status === 'fulfilled') servers.push(r.value.handle);
    if (temporalResult.status === 'rejected') throw temporalResult.reason;
    if (ferretResult.status === 'rejected') throw ferretResult.reason;
    const [temporal, ferret] = [temporalResult.value, ferretResult.value];
    if (shuttingDown) {
      await Promise.all(servers.map((p) => p.stop()));
      return await finished; // Ctrl-C during start-up
    }
    servers.forEach(watch);

    const env = {
      SPUR_MONGODB_URI: ferret.uri,
      SPUR_TEMPORAL_ADDRESS: temporal.address,
      SPUR_DATA_DIR: dataDir,
      SPUR_PORT: String(ports.api),
      // A developer's model server (Ollama), fake services and callback receivers are on this
      // machine or its network; production leaves these addresses closed.
      SPUR_OUTBOUND_ALLOW_PRIVATE: process.env.SPUR_OUTBOUND_ALLOW_PRIVATE ?? 'true',
    };
    // The worker and the api are where durability shows: one that dies is restarted (with
    // backoff, logged) while runs go on, instead of the whole stack stopping.
    // Metrics are on in dev, each process on its own port: the api's, then the worker's apart.
    const metricsPorts = { api: ports.metrics, worker: ports.metrics + 1 };
    const start = (name: 'api' | 'worker', [command, ...args]: readonly string[]): void => {
      if (command === undefined) throw new Error(`empty ${name} command`);
      const own = { ...env, SPUR_METRICS_PORT: String(metricsPorts[name]) };
      apps.push(
        supervise(
          { name, command, args, env: own, cwd: REPO_ROOT },
          options.restartPolicy ?? DEFAULT_RESTART_POLICY,
          say,
        ),
      );
    };
    if (workerCommand) start('worker', workerCommand);
    start('api', apiCommand);

    const apiUp = waitForTcp('127.0.0.1', ports.api, 120_000);
    await Promise.race([apiUp, finished]);
    if (!shuttingDown) {
      const api = `http://127.0.0.1:${ports.api}/api`;
      say(`ready: API ${api}  docs ${api}/docs  Temporal UI ${temporal.uiUrl}  (data in ${dataDir})`);
      const metrics = (workerCommand ? (['api', 'worker'] as const) : (['api'] as const)).map(
        (name) => `${name} http://127.0.0.1:${metricsPorts[name]}/metrics`,
      );
      say(`metrics: ${metrics.join('  ')}`);
    }
  } catch (err) {
    void shutdown(1, `start-up failed: ${err instanceof Error ? err.message : String(err)}`);
  }
  return finished;
}

if (require.main === module) {
  runDev().then(
    (code) => process.exit(code),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}

// The production shape on one machine, processes standing in for hosts: PostgreSQL, the Temporal
// server on it, FerretDB on it as Spur's document store, N apis behind nginx and M workers, all
// compiled as the image runs them, and Prometheus scraping each api and worker. npm run cluster and
// the cluster suite start it.
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { hashApiKey } from '../../../src/http/api-keys';
import { distEntry } from '../../build';
import { freePort, waitForTcp } from '../ports';
import { type ManagedProcess, spawnManaged } from '../processes';
import { waitUntilUp } from '../servers';
import { REPO_ROOT } from '../tools';
import { type FerretPostgres, startFerretOnPostgres } from './ferretdb-postgres';
import { type LoadBalancer, startLoadBalancer } from './load-balancer';
import { type PostgresServer, restartPostgres, startPostgres } from './postgres';
import { type ClusterPrometheus, startPrometheus } from './prometheus';
import { type ClusterTemporal, startClusterTemporal } from './temporal-server';

export interface ClusterOptions {
  /** Everything the cluster keeps (PostgreSQL's data, configs, logs, the secret key). */
  dir: string;
  /**
   * The api and workers run the compiled files in dist/ and this prebuilt workflow bundle, as the
   * image does: built by the caller (npm run cluster builds them; the test harness has already).
   */
  workflowBundle: string;
  apis?: number;
  workers?: number;
  /** Fixed ports (npm run cluster); free ones otherwise. */
  ports?: Partial<Record<'loadBalancer' | 'temporal' | 'postgres' | 'ferret' | 'prometheus', number>>;
  /** How often Prometheus scrapes every api and worker (default 5 s). */
  scrapeIntervalSeconds?: number;
  /** Settings every api and worker gets on top of the cluster's own. */
  env?: Record<string, string>;
  /** Logs to files in `dir` (tests) instead of the terminal. */
  logToFiles?: boolean;
}

export interface SpurProcess {
  name: string;
  handle: ManagedProcess;
  /** An api's own address (behind the load balancer). */
  port?: number;
  /** Where it serves GET /metrics (SPUR_METRICS_PORT), which Prometheus scrapes. */
  metricsPort: number;
}

export interface Cluster {
  /** The load balancer's API base: `http://127.0.0.1:<port>/api`. */
  apiUrl: string;
  /** The key clients send (`Authorization: Bearer <key>`). */
  apiKey: string;
  /** What every api and worker is started with. */
  env: Record<string, string>;
  postgres: PostgresServer;
  temporal: ClusterTemporal;
  ferret: FerretPostgres;
  loadBalancer: LoadBalancer;
  /** Scrapes every api and worker running (a replacement too), labelled `process="worker-4"`. */
  prometheus: ClusterPrometheus;
  apis: SpurProcess[];
  workers: SpurProcess[];
  /** Starts another worker (or a replacement) with the cluster's settings, plus `extraEnv`. */
  startWorker(extraEnv?: Record<string, string>): Promise<SpurProcess>;
  /** Starts an api on the port of one that stopped (the load balancer knows its port). */
  restartApi(api: SpurProcess): Promise<SpurProcess>;
  /** PostgreSQL stopped (kill -9 with SIGKILL) and started again on its data. */
  restartPostgres(signal?: NodeJS.Signals): Promise<void>;
  stop(): Promise<void>;
}

/** The installation's secret and API key live in the cluster's folder: a restart keeps sealed values readable. */
function secrets(dir: string): { secretKey: string; apiKey: string } {
  const file = path.join(dir, 'secrets.json');
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as { secretKey: string; apiKey: string };
  const made = {
    secretKey: randomBytes(32).toString('base64'),
    apiKey: `spur_${randomBytes(24).toString('base64url')}`,
  };
  writeFileSync(file, JSON.stringify(made), { mode: 0o600 });
  return made;
}

export async function startCluster(options: ClusterOptions): Promise<Cluster> {
  const dir = path.resolve(options.dir);
  mkdirSync(dir, { recursive: true });
  // The load balancer's workers run as nobody when the cluster runs as root.
  chmodSync(dir, 0o755);
  const log = (name: string) => (options.logToFiles ? { logFile: path.join(dir, `${name}.log`) } : {});
  const started: ManagedProcess[] = [];
  const track = <T extends { handle: ManagedProcess }>(x: T): T => (started.push(x.handle), x);
  const port = async (name: keyof NonNullable<ClusterOptions['ports']>) => options.ports?.[name] ?? freePort();

  try {
    let postgres = track(
      await startPostgres({ port: await port('postgres'), dataDir: path.join(dir, 'postgres'), ...log('postgres') }),
    );
    const [temporal, ferret, prometheus] = await Promise.all([
      startClusterTemporal({
        port: await port('temporal'),
        postgres,
        dataDir: path.join(dir, 'temporal'),
        ...log('temporal'),
      }).then(track),
      startFerretOnPostgres({
        port: await port('ferret'),
        postgres,
        stateDir: mkdirp(path.join(dir, 'ferretdb')),
        ...log('ferretdb'),
      }).then(track),
      startPrometheus({
        port: await port('prometheus'),
        dir: path.join(dir, 'prometheus'),
        scrapeIntervalSeconds: options.scrapeIntervalSeconds ?? 5,
        ...log('prometheus'),
      }).then(track),
    ]);
    const { secretKey, apiKey } = secrets(dir);
    const env: Record<string, string> = {
      SPUR_MONGODB_URI: ferret.uri,
      SPUR_TEMPORAL_ADDRESS: temporal.address,
      SPUR_SECRET_KEY: secretKey,
      SPUR_API_KEY_HASHES: hashApiKey(apiKey),
      SPUR_WORKFLOW_BUNDLE: options.workflowBundle,
      SPUR_VECTOR_STORE_URI: mkdirp(path.join(dir, 'vectors')),
      SPUR_HOST: '127.0.0.1',
      ...options.env,
    };
    // Every api and worker serves its metrics on a port of its own, scraped while the process runs.
    const scraped = new Map<string, { port: number; handle: ManagedProcess }>();
    const metricsPortOf = new Map<string, number>();
    const publish = () => prometheus.setTargets([...scraped].map(([process, { port }]) => ({ process, port })));
    const scrape = async (name: string, handle: ManagedProcess) => {
      scraped.set(name, { port: metricsPortOf.get(name) as number, handle });
      publish();
      await handle.exited;
      // Unless a restart under the same name has taken its place already.
      if (scraped.get(name)?.handle !== handle) return;
      scraped.delete(name);
      publish();
    };
    // An api restarted keeps its name and port, so its series go on where they stopped.
    const metricsPort = async (name: string) => {
      const port = metricsPortOf.get(name) ?? (await freePort());
      metricsPortOf.set(name, port);
      return port;
    };
    let workerCount = 0;
    const startWorker = async (extraEnv: Record<string, string> = {}): Promise<SpurProcess> => {
      const name = `worker-${++workerCount}`;
      const metrics = await metricsPort(name);
      const handle = spawnManaged({
        name,
        command: process.execPath,
        args: [distEntry('src/processes/worker.ts')],
        env: { ...env, SPUR_METRICS_PORT: String(metrics), ...extraEnv },
        cwd: REPO_ROOT,
        ...log(name),
      });
      started.push(handle);
      void scrape(name, handle);
      return { name, handle, metricsPort: metrics };
    };
    const startApi = async (name: string, apiPort: number): Promise<SpurProcess> => {
      const metrics = await metricsPort(name);
      const handle = spawnManaged({
        name,
        command: process.execPath,
        args: [distEntry('src/processes/api.ts')],
        env: { ...env, SPUR_PORT: String(apiPort), SPUR_METRICS_PORT: String(metrics) },
        cwd: REPO_ROOT,
        ...log(name),
      });
      started.push(handle);
      void scrape(name, handle);
      const logFile = options.logToFiles ? path.join(dir, `${name}.log`) : undefined;
      await waitUntilUp(handle, name, logFile, waitForTcp('127.0.0.1', apiPort, 60_000));
      return { name, handle, port: apiPort, metricsPort: metrics };
    };
    const apiPorts = await Promise.all(Array.from({ length: options.apis ?? 2 }, () => freePort()));
    const apis = await Promise.all(apiPorts.map((p, i) => startApi(`api-${i + 1}`, p)));
    const workers = await Promise.all(Array.from({ length: options.workers ?? 3 }, () => startWorker()));
    const loadBalancer = track(
      await startLoadBalancer({
        port: await port('loadBalancer'),
        upstreams: apiPorts,
        dir: path.join(dir, 'nginx'),
        ...log('nginx'),
      }),
    );
    const cluster: Cluster = {
      apiUrl: `${loadBalancer.url}/api`,
      apiKey,
      env,
      postgres,
      temporal,
      ferret,
      loadBalancer,
      prometheus,
      apis,
      workers,
      startWorker,
      restartApi: (api) => startApi(api.name, api.port as number),
      async restartPostgres(signal = 'SIGKILL') {
        postgres = await restartPostgres(postgres, signal);
        started.push(postgres.handle);
        cluster.postgres = postgres;
      },
      async stop() {
        // Apps first (they drain), then the servers they use.
        const apps = [...cluster.apis, ...cluster.workers].map((p) => p.handle);
        await Promise.allSettled(apps.map((h) => h.stop('SIGTERM', 15_000)));
        await Promise.allSettled(started.filter((h) => !apps.includes(h)).map((h) => h.stop('SIGTERM', 15_000)));
      },
    };
    return cluster;
  } catch (err) {
    await Promise.allSettled(started.map((h) => h.stop('SIGKILL', 0)));
    throw err;
  }
}

function mkdirp(dir: string): string {
  mkdirSync(dir, { recursive: true });
  return dir;
}

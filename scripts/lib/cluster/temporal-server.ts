// The Temporal server the `temporalio/server` image runs (built from its Go module by setup), on
// PostgreSQL with SQL visibility, set up as docker-compose's auto-setup and temporal-setup do:
// schema by temporal-sql-tool, the namespace, then Spur's search attributes.
import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { SEARCH_ATTRIBUTE_TYPES } from '../../../src/contracts/search-attributes';
import { assertPortFree, freePortBelow, waitForTcp } from '../ports';
import { type ManagedProcess, spawnManaged } from '../processes';
import { waitUntilUp } from '../servers';
import { REPO_ROOT, resolveTool } from '../tools';
import { POSTGRES_USER, type PostgresServer } from './postgres';

const HOST = '127.0.0.1';
/** Docker-compose's Temporal server settings, used as they are (one file for both). */
export const DYNAMIC_CONFIG_FILE = path.join(REPO_ROOT, 'deploy', 'temporal-dynamic-config.yaml');
/** Where setup puts the server's PostgreSQL schema (from the same Go module as the binary). */
const SCHEMA_DIR = path.join(REPO_ROOT, '.tools', 'temporal-schema', 'postgresql', 'v12');
/** Compose's DEFAULT_NAMESPACE_RETENTION. */
const RETENTION = '168h';

export interface ClusterTemporalOptions {
  /** The frontend's gRPC port: what clients dial. */
  port: number;
  postgres: PostgresServer;
  /** Config and logs of this server. */
  dataDir: string;
  namespace?: string;
  logFile?: string;
  /** History shards: fixed for the life of a cluster (Temporal cannot change it later). */
  historyShards?: number;
}

export interface ClusterTemporal {
  address: string;
  handle: ManagedProcess;
  options: ClusterTemporalOptions;
  /** The internal ports the server's four services listen on (for a restart on the same ones). */
  ports: ServicePorts;
}

interface ServicePorts {
  frontendHttp: number;
  membership: Record<'frontend' | 'history' | 'matching' | 'worker', number>;
  grpc: Record<'history' | 'matching' | 'worker', number>;
}

function runTool(bin: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) =>
    execFile(bin, args, { timeout: 120_000 }, (err, stdout, stderr) =>
      err ? reject(new Error(`${path.basename(bin)} ${args.join(' ')}: ${stderr || err.message}`)) : resolve(stdout),
    ),
  );
}

/** Creates a database and applies every versioned schema step (idempotent: applied steps are skipped). */
async function setUpSchema(postgres: PostgresServer, database: string, schema: 'temporal' | 'visibility') {
  const sql = resolveTool('temporal-sql-tool');
  const common = ['--plugin', 'postgres12', '--ep', HOST, '-p', String(postgres.port), '-u', POSTGRES_USER];
  await runTool(sql, [...common, '--db', database, 'create-database']).catch((err: Error) => {
    if (!/already exists/.test(err.message)) throw err;
  });
  await runTool(sql, [...common, '--db', database, 'setup-schema', '-v', '0.0']);
  await runTool(sql, [...common, '--db', database, 'update-schema', '-d', path.join(SCHEMA_DIR, schema, 'versioned')]);
}

function configYaml(o: ClusterTemporalOptions, ports: ServicePorts): string {
  const store = (database: string, maxConns: number) => `
      sql:
        pluginName: "postgres12"
        databaseName: "${database}"
        connectAddr: "${HOST}:${o.postgres.port}"
        connectProtocol: "tcp"
        user: "${POSTGRES_USER}"
        maxConns: ${maxConns}
        maxIdleConns: ${maxConns}
        maxConnLifetime: "1h"`;
  const service = (name: keyof ServicePorts['membership'], grpc: number, extra = '') => `
  ${name}:
    rpc:
      grpcPort: ${grpc}
      membershipPort: ${ports.membership[name]}
      bindOnLocalHost: true${extra}`;
  return `log:
  stdout: true
  level: warn
persistence:
  defaultStore: default
  visibilityStore: visibility
  numHistoryShards: ${o.historyShards ?? 4}
  datastores:
    default:${store('temporal', 20)}
    visibility:${store('temporal_visibility', 10)}
global:
  membership:
    maxJoinDuration: 30s
    broadcastAddress: "${HOST}"
services:${service('frontend', o.port, `\n      httpPort: ${ports.frontendHttp}`)}${service('matching', ports.grpc.matching)}${service('history', ports.grpc.history)}${service('worker', ports.grpc.worker)}
clusterMetadata:
  enableGlobalNamespace: false
  failoverVersionIncrement: 10
  masterClusterName: "active"
  currentClusterName: "active"
  clusterInformation:
    active:
      enabled: true
      initialFailoverVersion: 1
      rpcName: "frontend"
      rpcAddress: "${HOST}:${o.port}"
dcRedirectionPolicy:
  policy: "noop"
dynamicConfigClient:
  filepath: "${DYNAMIC_CONFIG_FILE}"
  pollInterval: "10s"
`;
}

/** The server records its services' ports in PostgreSQL as smallint: they must be below 32768. */
async function servicePorts(): Promise<ServicePorts> {
  const freePort = () => freePortBelow(32768);
  return {
    frontendHttp: await freePort(),
    membership: {
      frontend: await freePort(),
      history: await freePort(),
      matching: await freePort(),
      worker: await freePort(),
    },
    grpc: { history: await freePort(), matching: await freePort(), worker: await freePort() },
  };
}

/** The CLI (the dev tool setup builds) as an operator uses it against the server. */
function operator(address: string, args: string[]): Promise<string> {
  return runTool(resolveTool('temporal'), ['operator', ...args, '--address', address]);
}

async function registerNamespaceAndAttributes(address: string, namespace: string, deadline: number): Promise<void> {
  for (;;) {
    try {
      await operator(address, ['namespace', 'describe', '--namespace', namespace]);
      break;
    } catch (err) {
      if (/not found/i.test((err as Error).message)) {
        await operator(address, ['namespace', 'create', '--namespace', namespace, '--retention', RETENTION]).catch(
          (e: Error) => {
            if (!/already/i.test(e.message)) throw e;
          },
        );
      } else if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
  // A new namespace reaches every service's cache a little later: its first calls may not find it.
  const listed = await retrying(deadline, () =>
    operator(address, ['search-attribute', 'list', '--namespace', namespace]),
  );
  for (const [name, type] of Object.entries(SEARCH_ATTRIBUTE_TYPES)) {
    if (listed.includes(name)) continue;
    await retrying(deadline, () =>
      operator(address, ['search-attribute', 'create', '--namespace', namespace, '--name', name, '--type', type]),
    );
  }
  // Registered attributes reach every frontend's cache a little later: ready once a query on them works.
  const query = Object.keys(SEARCH_ATTRIBUTE_TYPES)
    .map((name) => `${name} = 'probe'`)
    .join(' AND ');
  const temporal = resolveTool('temporal');
  await retrying(deadline, () =>
    runTool(temporal, ['workflow', 'list', '--namespace', namespace, '--query', query, '--address', address]),
  );
}

async function retrying<T>(deadline: number, call: () => Promise<T>): Promise<T> {
  for (;;) {
    try {
      return await call();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

/** Sets up the schema (first time), starts the server and registers the namespace and search attributes. */
export async function startClusterTemporal(
  options: ClusterTemporalOptions,
  ports?: ServicePorts,
): Promise<ClusterTemporal> {
  await assertPortFree(HOST, options.port, 'Temporal');
  const namespace = options.namespace ?? 'default';
  await setUpSchema(options.postgres, 'temporal', 'temporal');
  await setUpSchema(options.postgres, 'temporal_visibility', 'visibility');
  const chosen = ports ?? (await servicePorts());
  const configDir = path.join(path.resolve(options.dataDir), 'config');
  mkdirSync(configDir, { recursive: true });
  writeFileSync(path.join(configDir, 'cluster.yaml'), configYaml(options, chosen));
  const handle = spawnManaged({
    name: 'temporal-server',
    command: resolveTool('temporal-server'),
    args: [
      '--root',
      path.resolve(options.dataDir),
      '--config',
      'config',
      '--env',
      'cluster',
      '--allow-no-auth',
      'start',
    ],
    logFile: options.logFile,
  });
  const address = `${HOST}:${options.port}`;
  const deadline = Date.now() + 120_000;
  const ready = (async () => {
    await waitForTcp(HOST, options.port, 120_000);
    await registerNamespaceAndAttributes(address, namespace, deadline);
  })();
  await waitUntilUp(handle, `the Temporal server (${address})`, options.logFile, ready);
  return { address, handle, options, ports: chosen };
}

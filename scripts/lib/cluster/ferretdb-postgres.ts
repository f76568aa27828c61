// Spur's document store on PostgreSQL: FerretDB (the binary setup builds) with its PostgreSQL
// backend, a production option beside MongoDB 7 (docs/production.md).
import { assertPortFree, waitForTcp } from '../ports';
import { type ManagedProcess, spawnManaged } from '../processes';
import { waitUntilUp } from '../servers';
import { resolveTool } from '../tools';
import { type PostgresServer, ensureDatabase } from './postgres';

const HOST = '127.0.0.1';

export interface FerretPostgresOptions {
  port: number;
  postgres: PostgresServer;
  /** FerretDB's own state (not the data: that is in PostgreSQL's `ferretdb` database). */
  stateDir: string;
  logFile?: string;
}

export interface FerretPostgres {
  uri: string;
  handle: ManagedProcess;
  options: FerretPostgresOptions;
}

export async function startFerretOnPostgres(options: FerretPostgresOptions): Promise<FerretPostgres> {
  await assertPortFree(HOST, options.port, 'FerretDB');
  await ensureDatabase(options.postgres, 'ferretdb');
  const handle = spawnManaged({
    name: 'ferretdb',
    command: resolveTool('ferretdb'),
    args: [
      '--handler=postgresql',
      `--postgresql-url=${options.postgres.url}/ferretdb`,
      `--listen-addr=${HOST}:${options.port}`,
      `--state-dir=${options.stateDir}`,
      '--debug-addr=-',
      '--telemetry=disable',
      '--log-level=error',
    ],
    logFile: options.logFile,
  });
  await waitUntilUp(
    handle,
    `FerretDB (${HOST}:${options.port})`,
    options.logFile,
    waitForTcp(HOST, options.port, 30_000),
  );
  return { uri: `mongodb://${HOST}:${options.port}/`, handle, options };
}

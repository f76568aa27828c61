// PostgreSQL from the OS packages, run as a process of its own (its own data folder and port, no
// system service): the database of the cluster's Temporal server and of FerretDB's PostgreSQL backend.
import { execFile, execFileSync } from 'node:child_process';
import {
  chownSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readlinkSync,
  rmSync,
  statSync,
  symlinkSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { assertPortFree, waitForTcp } from '../ports';
import { type ManagedProcess, spawnManaged } from '../processes';
import { waitUntilUp } from '../servers';

const HOST = '127.0.0.1';
/** The superuser the cluster's data folder is created with; loopback connections are trusted. */
export const POSTGRES_USER = 'spur';
/**
 * PostgreSQL's default of 100 runs out under load: the Temporal server's services each keep their
 * own pools (up to 20 connections for its store and 10 for visibility, compose's SQL_MAX_CONNS and
 * SQL_VIS_MAX_CONNS defaults), and FerretDB pools its own. docker-compose.yml sets the same.
 */
export const POSTGRES_MAX_CONNECTIONS = 300;

export interface PostgresOptions {
  port: number;
  dataDir: string;
  logFile?: string;
}

export interface PostgresServer {
  /** `postgres://spur@127.0.0.1:<port>` (append `/<database>`). */
  url: string;
  port: number;
  handle: ManagedProcess;
  options: PostgresOptions;
}

/** The newest PostgreSQL the OS packages installed (Debian: /usr/lib/postgresql/<major>/bin). */
export function postgresBin(name: string): string {
  const root = '/usr/lib/postgresql';
  const majors = existsSync(root) ? readdirSync(root).sort((a, b) => Number(b) - Number(a)) : [];
  for (const major of majors) {
    const file = path.join(root, major, 'bin', name);
    if (existsSync(file)) return file;
  }
  throw new Error(`PostgreSQL's ${name} not found under ${root}: run \`npm run setup\` (apt-get install postgresql)`);
}

type User = { uid: number; gid: number };

/** PostgreSQL refuses to run as root: a root harness runs it as the package's `postgres` user. */
function serverUser(): User | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag: '-u' | '-g') => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
  return { uid: id('-u'), gid: id('-g') };
}

function run(command: string, args: string[], user?: User): Promise<void> {
  return new Promise((resolve, reject) =>
    execFile(command, args, { ...(user ?? {}), timeout: 120_000 }, (err, _stdout, stderr) =>
      err ? reject(new Error(`${path.basename(command)} failed: ${stderr || err.message}`)) : resolve(),
    ),
  );
}

/** The first folder on the way to `dir` that other users may not enter. */
function closedToOthers(dir: string): string | undefined {
  for (let up = dir; up !== path.dirname(up); up = path.dirname(up))
    if (existsSync(up) && (statSync(up).mode & 0o001) === 0) return up;
  return undefined;
}

/**
 * Where the server keeps its data: the folder asked for, or, when the postgres user cannot enter a
 * folder above it (the clone in a `mktemp -d` folder or a private home), a folder of the postgres
 * user's own under the temp folder, linked from the one asked for so that a restart finds it again.
 */
function reachableDataDir(dataDir: string, user: User | undefined): string {
  const closed = user && closedToOthers(path.dirname(dataDir));
  if (!user || !closed) return dataDir;
  const link = lstatSync(dataDir, { throwIfNoEntry: false });
  if (link?.isSymbolicLink()) {
    const target = readlinkSync(dataDir);
    if (existsSync(target)) return target;
    rmSync(dataDir); // the temp folder was emptied (a reboot): start afresh
  } else if (link) {
    throw new Error(
      `PostgreSQL runs as the postgres user, which cannot enter ${closed}: move ${dataDir} out of it, or remove it to start afresh`,
    );
  }
  const own = mkdtempSync(path.join(os.tmpdir(), 'spur-postgres-'));
  chownSync(own, user.uid, user.gid);
  mkdirSync(path.dirname(dataDir), { recursive: true });
  symlinkSync(own, dataDir);
  return own;
}

/** Starts PostgreSQL on its data folder, creating the folder (initdb) the first time. */
export async function startPostgres(options: PostgresOptions): Promise<PostgresServer> {
  await assertPortFree(HOST, options.port, 'PostgreSQL');
  const user = serverUser();
  const dataDir = reachableDataDir(path.resolve(options.dataDir), user);
  if (!existsSync(path.join(dataDir, 'PG_VERSION'))) {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    if (user) chownSync(dataDir, user.uid, user.gid);
    await run(
      postgresBin('initdb'),
      ['-D', dataDir, '-U', POSTGRES_USER, '--auth=trust', '--encoding=UTF8', '--no-instructions'],
      user,
    );
  }
  const handle = spawnManaged({
    name: 'postgres',
    command: postgresBin('postgres'),
    // The socket goes in the data folder: the system's /var/run/postgresql may not exist or be writable.
    args: [
      '-D',
      dataDir,
      '-p',
      String(options.port),
      '-k',
      dataDir,
      '-c',
      `listen_addresses=${HOST}`,
      '-c',
      `max_connections=${POSTGRES_MAX_CONNECTIONS}`,
    ],
    logFile: options.logFile,
    user,
  });
  await waitUntilUp(
    handle,
    `PostgreSQL (${HOST}:${options.port})`,
    options.logFile,
    waitForTcp(HOST, options.port, 60_000).then(() => acceptingConnections(options.port, 60_000)),
  );
  return { url: `postgres://${POSTGRES_USER}@${HOST}:${options.port}`, port: options.port, handle, options };
}

/**
 * Listening is not yet serving: while it recovers (after a kill -9, or on a slow first start) the
 * server refuses logins with "the database system is starting up", which failed a createdb.
 */
async function acceptingConnections(port: number, timeoutMs: number): Promise<void> {
  const args = ['-h', HOST, '-p', String(port), '-U', POSTGRES_USER, '-t', '2'];
  const deadline = Date.now() + timeoutMs;
  while (
    !(await run(postgresBin('pg_isready'), args).then(
      () => true,
      () => false,
    ))
  ) {
    if (Date.now() > deadline)
      throw new Error(`PostgreSQL (${HOST}:${port}) accepted no connection in ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Creates a database unless it exists. */
export async function ensureDatabase(server: PostgresServer, name: string): Promise<void> {
  const args = ['-h', HOST, '-p', String(server.port), '-U', POSTGRES_USER, name];
  await run(postgresBin('createdb'), args).catch((err: Error) => {
    if (!/already exists/.test(err.message)) throw err;
  });
}

/**
 * Stopped (kill -9 with SIGKILL) and started again on the same data folder, which replays its WAL.
 * After a kill -9 the old backends take a moment to exit and release the shared memory, and until
 * they have the new server refuses to start: it is tried again for a while.
 */
export async function restartPostgres(
  server: PostgresServer,
  signal: NodeJS.Signals = 'SIGTERM',
): Promise<PostgresServer> {
  await server.handle.stop(signal, signal === 'SIGKILL' ? 0 : 30_000);
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      return await startPostgres(server.options);
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

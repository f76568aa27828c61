import http from 'node:http';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { Client } from '@temporalio/client';
import type { Connection as MongoConnection } from 'mongoose';
import { createApp } from '../../src/app';
import type { Config } from '../../src/config/settings';
import { loadConfig } from '../../src/config/load-config';
import { connectMongo } from '../../src/db/connection';
import { createModels, type Models } from '../../src/db/models';
import { markOlderRecordsInBackground, prepareDatabase } from '../../src/db/prepare-database';
import { type Logger, createLogger } from '../../src/logger';
import { apiProbes, createTemporalProbe } from '../../src/health/probes';
import { type Services, createServices } from '../../src/services';
import { apiTemporalConnection } from '../../src/temporal-connection';
import { PythonSandbox } from '../../src/nodes/code-execution/python-sandbox';
import { type HostedWorker, hostSpurWorker } from '../../temporal/hosted-worker';
import { quietRuntime } from './quiet-runtime';
import { stack } from './stack';

export interface TestApi {
  baseUrl: string;
  models: Models;
  mongo: MongoConnection;
  temporal: Client;
  config: Readonly<Config>;
  /** The api's services (a test may look at, e.g., its run event watchers). */
  services: Services;
  /** Environment that points a worker process at the same database, task queue and key. */
  env: Record<string, string>;
  /** Settles once the api has marked what older versions recorded unmarked (prepare-database.ts), as it does in the background. */
  marked: Promise<void>;
  close(): Promise<void>;
}

export interface StartApiOptions {
  /**
   * Host a worker of the api's task queue in this process, as `npm run dev` does (the combined
   * topology, src/processes/combined.ts): runs start eagerly and blocking runs are answered
   * from their final saves. Without it the api runs alone, as src/processes/api.ts does, and a test
   * starts workers as processes of their own.
   */
  hostWorker?: boolean;
}

/**
 * The real api (createApp) on a loopback port, backed by the harness's FerretDB (a fresh database
 * and task queue per call, so suites never see each other's rows or runs) and Temporal.
 */
export async function startApi(
  overrides: Record<string, string> = {},
  options: StartApiOptions = {},
): Promise<TestApi> {
  const suffix = randomBytes(4).toString('hex');
  const env = {
    SPUR_MONGODB_URI: stack.mongoUri,
    SPUR_MONGODB_DB: `spur_test_${suffix}`,
    SPUR_TEMPORAL_ADDRESS: stack.temporalAddress,
    SPUR_TASK_QUEUE: `spur-test-${suffix}`,
    SPUR_WORKFLOW_ID_PREFIX: `t${suffix}-`,
    SPUR_SECRET_KEY: randomBytes(32).toString('base64'),
    SPUR_LOG_LEVEL: 'silent',
    // As `npm run dev` sets it: the fakes tests talk to listen on loopback. Tests of the
    // production default set it to 'false'.
    SPUR_OUTBOUND_ALLOW_PRIVATE: 'true',
    // Every test worker would otherwise leave a schedule firing on the shared server; the
    // reconciler's own tests turn it on.
    SPUR_RECONCILE_EVERY_SECONDS: '0',
    // The prebuilt bundle, as worker processes load it (test/support/worker.ts).
    SPUR_WORKFLOW_BUNDLE: stack.workflowBundle,
    // A folder of the api's own, as its database is: deleting index VI1 here must never drop
    // another test's vectors, nor those in the clone's .data/ that `npm run dev` keeps.
    SPUR_VECTOR_STORE_URI: path.join(stack.tmpDir, `vectors-${suffix}`),
    ...overrides,
  };
  const config = loadConfig(env);
  const mongo = await connectMongo(config);
  const models = createModels(mongo);
  await prepareDatabase(models);
  const logger = createLogger(config, 'api-test');
  const marked = markOlderRecordsInBackground(models, logger);
  const temporalHealth = createTemporalProbe(config.temporal.address);
  const hosted = options.hostWorker ? await hostWorker(config, models, logger) : undefined;
  const connection = hosted?.connection ?? apiTemporalConnection(config.temporal.address);
  const temporal = hosted?.temporal ?? new Client({ connection, namespace: config.temporal.namespace });
  const secretKey = Buffer.from(env.SPUR_SECRET_KEY, 'base64');
  const services = createServices({
    models,
    secretKey,
    temporal,
    config,
    ...(hosted ? { eagerStart: true, outcomes: hosted.outcomes } : {}),
  });
  const app = createApp({
    config,
    secretKey,
    logger,
    services,
    // The api alone (src/processes/api.ts) has no Python sandbox to check; hosting a worker, it has.
    probes: apiProbes(mongo, temporalHealth.probe, hosted ? new PythonSandbox(config.python) : undefined),
  });
  const server = http.createServer(app.callback());
  // Fetch closes an idle socket a second before the server's keep-alive hint, on a coarse timer;
  // with the test's client and this server on one busy event loop, that close can come after the
  // server's own (5 s by default), and the next request goes out on a socket being closed
  // (ECONNRESET, seen on a 17 MB start_run in a loaded full run). Far apart, they never race.
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/api`,
    models,
    marked,
    mongo,
    temporal,
    config,
    services,
    env,
    async close() {
      services.runEvents.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await hosted?.stop();
      await mongo.dropDatabase().catch(() => undefined);
      await Promise.allSettled([mongo.close(), temporalHealth.close(), connection.close()]);
    },
  };
}

/** A worker in this process, as processes/combined.ts hosts one (a runtime installed once per process). */
function hostWorker(config: Readonly<Config>, models: Models, logger: Logger): Promise<HostedWorker> {
  quietRuntime();
  return hostSpurWorker(config, models, logger);
}

/** An api with the given settings for the length of `use`, closed after it whatever happens. */
export async function withApi<T>(env: Record<string, string>, use: (api: TestApi) => Promise<T>): Promise<T> {
  const api = await startApi(env);
  try {
    return await use(api);
  } finally {
    await api.close();
  }
}

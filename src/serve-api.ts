import http from 'node:http';
import type { RunOutcomes } from './engine/run-outcomes';
import type { Client } from '@temporalio/client';
import type { Connection as MongoConnection } from 'mongoose';
import { createApp } from './app';
import type { Config } from './config/settings';
import type { Models } from './db/models';
import type { Logger } from './logger';
import { apiProbes, createTemporalProbe } from './health/probes';
import type { PythonSandbox } from './nodes/code-execution/python-sandbox';
import { loadSecretKey } from './secrets/secret-key';
import { createServices } from './services';
import { serveMetrics } from './metrics/metrics-server';
import { metrics } from './metrics/metrics';
import { createRunLookups } from './db/runs/run-lookups';

export interface ApiDeps {
  config: Readonly<Config>;
  logger: Logger;
  mongo: MongoConnection;
  models: Models;
  temporal: Client;
  /**
   * True when `temporal` runs over a NativeConnection shared with a worker in this process: runs
   * then start with eager workflow start (their first workflow task comes back in the start
   * response and runs here, skipping the server's task dispatch).
   */
  eagerStart: boolean;
  /** Final saves of the worker in this process (combined topology): blocking runs answer from them. */
  outcomes?: RunOutcomes;
  /**
   * The Python sandbox settings of the worker in this process (combined topology): /api/health
   * then says whether it starts. The api alone runs no Python and leaves that to its workers.
   */
  hostedWorkerSandbox?: PythonSandbox;
  /** The Temporal SDK's own metrics of the worker in this process (combined topology), served beside the api's. */
  sdkMetrics?: () => Promise<string>;
  /** Runs after the HTTP server has drained, before the process exits (closes connections, stops a hosted worker). */
  afterDrain: () => Promise<void>;
}

/** Listens, then on SIGTERM/SIGINT stops taking connections, drains requests in flight and exits 0. */
export async function serveApi(deps: ApiDeps): Promise<void> {
  const { config, logger, mongo } = deps;
  const temporalHealth = createTemporalProbe(config.temporal.address);
  const draining = new AbortController();
  const secretKey = loadSecretKey(config);
  const app = createApp({
    config,
    logger,
    secretKey,
    services: createServices({
      models: deps.models,
      secretKey,
      temporal: deps.temporal,
      config,
      eagerStart: deps.eagerStart,
      ...(deps.outcomes ? { outcomes: deps.outcomes } : {}),
      stopping: draining.signal,
      logger,
    }),
    probes: apiProbes(mongo, temporalHealth.probe, deps.hostedWorkerSandbox),
  });
  const server = http.createServer(
    {
      // Bounds on what a client can make the api hold: its headers, and its whole request (a
      // stalled upload), each within a limit. A blocking run's wait comes after the request is in
      // and is bounded by SPUR_BLOCKING_RUN_WAIT_SECONDS, so these do not cut it.
      headersTimeout: config.http.headersTimeoutMs,
      requestTimeout: Math.max(config.http.requestTimeoutMs, config.http.headersTimeoutMs),
      // How often those limits are checked (Node's default is 30 s).
      connectionsCheckingInterval: Math.min(1000, config.http.headersTimeoutMs),
    },
    app.callback(),
  );
  await new Promise<void>((resolve) => server.listen(config.http.port, config.http.host, resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.http.port;
  logger.info({ url: `http://${config.http.host}:${port}/api`, eagerStart: deps.eagerStart }, 'api listening');
  const metricsServer = await serveMetrics(config.metrics, deps.sdkMetrics);
  if (metricsServer) {
    logger.info({ url: `http://${config.metrics.host}:${metricsServer.port}/metrics` }, 'metrics listening');
    // Fleet-wide state, read from the database when scraped: every api reports the same count.
    const lookups = createRunLookups(deps.models);
    metrics.pausesOpen.track(lookups, async (runs) => [{ labels: {}, value: await runs.pausedCount() }]);
  }

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info(
      { signal, drainMs: config.http.shutdownDrainMs },
      'api stopping: no new connections, draining requests in flight',
    );
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    // An answered keep-alive connection would hold close() for keepAliveTimeout: close idle ones as they appear.
    const sweep = setInterval(() => server.closeIdleConnections(), 100);
    // Blocking runs may wait for minutes: past the drain time they answer 202 with the run id to
    // poll (the runs go on in Temporal). Whatever still hangs after that (a stalled upload) is cut.
    const drain = setTimeout(() => draining.abort(), config.http.shutdownDrainMs);
    const cut = setTimeout(() => server.closeAllConnections(), config.http.shutdownDrainMs + 5000);
    await closed;
    clearInterval(sweep);
    clearTimeout(drain);
    clearTimeout(cut);
    await Promise.allSettled([temporalHealth.close(), deps.afterDrain()]);
    logger.info('api stopped');
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));
}

/** Called first thing at boot: no sign-in on a non-loopback address stops the process (unless allowed). */
export function refuseInsecureListen(config: Readonly<Config>): void {
  if (!isLoopback(config.http.host) && !config.http.signInRequired && !config.http.allowInsecure) {
    console.error(
      `Refusing to listen on ${config.http.host} without sign-in: set SPUR_API_KEY_HASHES or SPUR_SIGN_IN_REQUIRED=true, or SPUR_ALLOW_INSECURE=true to accept the risk.`,
    );
    process.exit(2);
  }
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host.startsWith('127.');
}

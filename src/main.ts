import http from 'node:http';
import { Client, Connection } from '@temporalio/client';
import { createApp } from './app';
import { loadConfig } from './config';
import { connectMongo } from './db/connection';
import { createModels, syncIndexes } from './db/models';
import { createLogger } from './logger';
import { createTemporalProbe, mongoProbe } from './modules/health/probes';
import { loadSecretKey } from './modules/env-mgmt/secret-key';
import { createServices } from './services';

/** Boot order: config → MongoDB → Temporal client → app → listen; SIGTERM/SIGINT drain and close. */
async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config, 'api');
  if (!isLoopback(config.http.host) && config.http.apiKeyHashes.length === 0 && !config.http.allowInsecure) {
    console.error(`Refusing to listen on ${config.http.host} without API keys: set SPUR_API_KEY_HASHES, or SPUR_ALLOW_INSECURE=true to accept the risk.`);
    process.exit(2);
  }
  const mongo = await connectMongo(config);
  const models = createModels(mongo);
  await syncIndexes(models);
  const temporalHealth = createTemporalProbe(config.temporal.address);
  // Lazy: the api serves definitions while Temporal is still starting; health reports it.
  const temporalConnection = Connection.lazy({ address: config.temporal.address });
  const temporal = new Client({ connection: temporalConnection, namespace: config.temporal.namespace });
  const draining = new AbortController();
  const app = createApp({
    config,
    logger,
    services: createServices({ models, secretKey: loadSecretKey(config), temporal, config, stopping: draining.signal }),
    probes: { mongodb: mongoProbe(mongo), temporal: temporalHealth.probe },
  });
  const server = http.createServer(app.callback());
  server.requestTimeout = 0; // blocking runs may legitimately take long; the run engine bounds them
  await new Promise<void>((resolve) => server.listen(config.http.port, config.http.host, resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.http.port;
  logger.info({ url: `http://${config.http.host}:${port}/api` }, 'api listening');

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal, drainMs: config.http.shutdownDrainMs }, 'api stopping: no new connections, draining requests in flight');
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
    await Promise.allSettled([mongo.close(), temporalHealth.close(), temporalConnection.close()]);
    logger.info('api stopped');
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host.startsWith('127.');
}

main().catch((err: unknown) => {
  console.error('api failed to start:', err);
  process.exit(1);
});

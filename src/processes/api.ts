import { Client } from '@temporalio/client';
import { loadConfig } from '../config/load-config';
import { connectMongo } from '../db/connection';
import { createModels } from '../db/models';
import { markOlderRecordsInBackground, prepareDatabase } from '../db/prepare-database';
import { createLogger } from '../logger';
import { refuseInsecureListen, serveApi } from '../serve-api';
import { apiTemporalConnection } from '../temporal-connection';

/** The api alone (production): config → MongoDB → Temporal client → app → listen. */
async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config, 'api');
  refuseInsecureListen(config);
  const mongo = await connectMongo(config);
  const models = createModels(mongo);
  await prepareDatabase(models);
  void markOlderRecordsInBackground(models, logger);
  // Lazy: the api serves definitions while Temporal is still starting; health reports it.
  const temporalConnection = apiTemporalConnection(config.temporal.address);
  const temporal = new Client({ connection: temporalConnection, namespace: config.temporal.namespace });
  await serveApi({
    config,
    logger,
    mongo,
    models,
    temporal,
    eagerStart: false,
    afterDrain: async () => {
      await Promise.allSettled([mongo.close(), temporalConnection.close()]);
    },
  });
}

main().catch((err: unknown) => {
  console.error('api failed to start:', err);
  process.exit(1);
});

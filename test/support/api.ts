import http from 'node:http';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { Connection as MongoConnection } from 'mongoose';
import { createApp } from '../../src/app';
import { loadConfig } from '../../src/config';
import { connectMongo } from '../../src/db/connection';
import { createTemporalProbe, mongoProbe } from '../../src/modules/health/probes';
import { createModels, syncIndexes, type Models } from '../../src/db/models';
import { createLogger } from '../../src/logger';
import { createServices } from '../../src/services';
import { stack } from './stack';

export interface TestApi {
  baseUrl: string;
  models: Models;
  mongo: MongoConnection;
  secretKey: Buffer;
  close(): Promise<void>;
}

/**
 * The real api (createApp) on a loopback port, backed by the harness's FerretDB (a fresh database
 * per call, so suites never see each other's rows) and Temporal.
 */
export async function startApi(overrides: Record<string, string> = {}): Promise<TestApi> {
  const dbName = `spur_test_${randomBytes(4).toString('hex')}`;
  const secretKey = randomBytes(32);
  const config = loadConfig({
    SPUR_MONGODB_URI: stack.mongoUri,
    SPUR_MONGODB_DB: dbName,
    SPUR_TEMPORAL_ADDRESS: stack.temporalAddress,
    SPUR_SECRET_KEY: secretKey.toString('base64'),
    SPUR_LOG_LEVEL: 'silent',
    ...overrides,
  });
  const mongo = await connectMongo(config);
  const models = createModels(mongo);
  await syncIndexes(models);
  const temporalHealth = createTemporalProbe(config.temporal.address);
  const app = createApp({
    config,
    logger: createLogger(config, 'api-test'),
    services: createServices(models, secretKey),
    probes: { mongodb: mongoProbe(mongo), temporal: temporalHealth.probe },
  });
  const server = http.createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/api`,
    models,
    mongo,
    secretKey,
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await mongo.dropDatabase().catch(() => undefined);
      await Promise.allSettled([mongo.close(), temporalHealth.close()]);
    },
  };
}

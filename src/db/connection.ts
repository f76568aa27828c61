import mongoose, { type Connection } from 'mongoose';
import type { Config } from '../config/settings';

/**
 * One connection per process. `sanitizeFilter` makes Mongoose refuse query operators smuggled in
 * as values (e.g. `{"$ne": null}` where an id is expected).
 */
export async function connectMongo(config: Pick<Config, 'mongo'>): Promise<Connection> {
  mongoose.set('sanitizeFilter', true);
  mongoose.set('strictQuery', true);
  mongoose.set('bufferTimeoutMS', config.mongo.timeoutMs);
  const conn = mongoose.createConnection(config.mongo.uri, {
    dbName: config.mongo.dbName,
    // While the database is down an operation fails after this long (the api answers 503) instead
    // of waiting for Mongoose's 10 s buffer or the driver's 30 s server selection.
    serverSelectionTimeoutMS: config.mongo.timeoutMs,
    // Collections and indexes are made by prepareDatabase alone, a few at a time: Mongoose would
    // otherwise start on every model as it is made, all at once (a connection each), and create
    // each collection in a command of its own before its indexes.
    autoIndex: false,
    autoCreate: false,
  });
  await conn.asPromise();
  return conn;
}

export async function pingMongo(conn: Connection): Promise<void> {
  const db = conn.db;
  if (!db) throw new Error('MongoDB connection is not open');
  await db.admin().command({ ping: 1 });
}

import type { mongo } from 'mongoose';

/**
 * An index on `expires_at`. On MongoDB it is a TTL index, so expired documents go by themselves.
 * FerretDB v1 (the dev and test database) refuses TTL indexes ("not implemented yet"): there a
 * plain index serves the owning module's own sweep. Either way readers treat an expired document
 * as gone, since MongoDB's TTL monitor lags by up to a minute.
 */
export async function ensureExpiryIndex(collection: mongo.Collection): Promise<void> {
  try {
    await collection.createIndex({ expires_at: 1 }, { name: 'expires_at_ttl', expireAfterSeconds: 0 });
  } catch (err) {
    if (!/expireAfterSeconds.*not implemented/i.test((err as Error).message)) throw err;
    await collection.createIndex({ expires_at: 1 }, { name: 'expires_at' });
  }
}

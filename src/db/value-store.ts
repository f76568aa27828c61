import { createHash } from 'node:crypto';
import { Binary, type Collection, type Db } from 'mongodb';
import { isDuplicateKeyError } from './ids';

/**
 * Large values, stored once per run in GridFS layout (`values.files` + `values.chunks`, so any
 * GridFS tool can read them) but with deterministic ids: a file is `<scope>/<sha256>`, its chunk n
 * `<file id>#<n>`. Content addressing makes a write idempotent (two nodes of a run producing the
 * same value, an activity retried after it stored) and lets every read be an `_id` lookup, the one
 * filter FerretDB v1 pushes down (GridFSBucket reads chunks by `files_id`, which scans).
 */
export const VALUE_CHUNK_BYTES = 1024 * 1024;

interface ValueFileDoc {
  _id: string;
  length: number;
  chunkSize: number;
  uploadDate: Date;
  filename: string;
  metadata: { scope: string };
}

interface ValueChunkDoc {
  _id: string;
  files_id: string;
  n: number;
  data: Binary;
  scope: string;
}

export function createValueStore(db: Db) {
  const files: Collection<ValueFileDoc> = db.collection<ValueFileDoc>('values.files');
  const chunks: Collection<ValueChunkDoc> = db.collection<ValueChunkDoc>('values.chunks');

  /** A document already there was written by an earlier attempt or a concurrent writer, with the same bytes. */
  async function insertOnce(write: () => Promise<unknown>): Promise<void> {
    try {
      await write();
    } catch (err) {
      if (!isDuplicateKeyError(err)) throw err;
    }
  }

  return {
    /** Stores JSON text under `scope`; returns its id. Chunks first: the file document marks it complete. */
    async put(scope: string, json: Buffer): Promise<string> {
      const id = `${scope}/${createHash('sha256').update(json).digest('hex')}`;
      if (await files.findOne({ _id: id }, { projection: { _id: 1 } })) return id;
      // A chunk at a time: the driver would otherwise hold every chunk's BSON at once.
      for (let n = 0, at = 0; at < json.length || n === 0; n++, at += VALUE_CHUNK_BYTES) {
        const data = new Binary(json.subarray(at, at + VALUE_CHUNK_BYTES));
        await insertOnce(() => chunks.insertOne({ _id: `${id}#${n}`, files_id: id, n, data, scope }));
      }
      const file: ValueFileDoc = {
        _id: id,
        length: json.length,
        chunkSize: VALUE_CHUNK_BYTES,
        uploadDate: new Date(),
        filename: id,
        metadata: { scope },
      };
      await insertOnce(() => files.insertOne(file));
      return id;
    },

    /** The stored JSON text, chunk by chunk (one chunk in memory at a time). */
    async *stream(id: string): AsyncGenerator<Buffer> {
      const file = await files.findOne({ _id: id });
      if (!file) throw new Error(`Stored value ${id} is missing (deleted with its run?)`);
      const count = Math.max(1, Math.ceil(file.length / file.chunkSize));
      for (let n = 0; n < count; n++) {
        const chunk = await chunks.findOne({ _id: `${id}#${n}` });
        if (!chunk) throw new Error(`Stored value ${id} is missing chunk ${n}`);
        yield Buffer.from(chunk.data.buffer);
      }
    },

    async read(id: string): Promise<Buffer> {
      const parts: Buffer[] = [];
      for await (const part of this.stream(id)) parts.push(part);
      return Buffer.concat(parts);
    },

    /** Every value of these scopes (runs being deleted). */
    async deleteScopes(scopes: string[]): Promise<void> {
      if (scopes.length === 0) return;
      await files.deleteMany({ 'metadata.scope': { $in: scopes } });
      await chunks.deleteMany({ scope: { $in: scopes } });
    },
  };
}

export type ValueStore = ReturnType<typeof createValueStore>;

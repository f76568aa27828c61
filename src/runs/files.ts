import { createHash } from 'node:crypto';
import type { mongo } from 'mongoose';
import { deleteIfPresent, putBytes } from '../db/gridfs';
import type { Models } from '../db/models';
import { BadRequestError } from '../errors';

const EXTENSIONS: Record<string, string> = {
  'image/jpeg': '.jpg',
  'image/png': '.png',
  'image/gif': '.gif',
  'application/pdf': '.pdf',
  'video/mp4': '.mp4',
  'text/plain': '.txt',
  'text/csv': '.csv',
};
const DATA_URI = /^data:([\w.+-]+\/[\w.+-]+);base64,([A-Za-z0-9+/=\s]*)$/;

/**
 * PySpur's handling of files inside run inputs: every string that starts with
 * `data:` must be `data:<mime>;base64,<payload>`; the bytes are stored (GridFS bucket run_files,
 * named by content hash, so a repeated upload is stored once) and the string becomes the stored
 * path `run_files/<workflow id>/<first 16 hex of sha256><ext>`. A malformed one is a 400.
 */
export async function storeDataUris(models: Models, workflowId: string, value: unknown): Promise<unknown> {
  if (typeof value === 'string') return value.startsWith('data:') ? storeOne(models, workflowId, value) : value;
  if (Array.isArray(value)) return Promise.all(value.map((v) => storeDataUris(models, workflowId, v)));
  if (value !== null && typeof value === 'object') {
    const entries = await Promise.all(
      Object.entries(value).map(async ([k, v]) => [k, await storeDataUris(models, workflowId, v)] as const),
    );
    return Object.fromEntries(entries);
  }
  return value;
}

async function storeOne(models: Models, workflowId: string, uri: string): Promise<string> {
  const match = DATA_URI.exec(uri);
  if (!match)
    throw new BadRequestError('Invalid data URI: expected data:<mime type>;base64,<payload>', 'INVALID_DATA_URI');
  const mime = match[1] as string;
  const bytes = Buffer.from((match[2] as string).replace(/\s/g, ''), 'base64');
  const name = `run_files/${workflowId}/${createHash('sha256').update(bytes).digest('hex').slice(0, 16)}${EXTENSIONS[mime] ?? ''}`;
  const [stored] = await models.runFiles.find({ filename: name }).limit(1).toArray();
  if (!stored) await putBytes(models.runFiles, name, { workflow_id: workflowId, content_type: mime }, bytes);
  // Another run names it now: retention keeps a file until every run that may name it is gone.
  else await runFileRecords(models).updateOne({ _id: stored._id }, { $set: { 'metadata.last_used_at': new Date() } });
  return name;
}

const runFileRecords = (models: Models) => {
  const db = models.conn.db;
  if (!db) throw new Error('run files need an open connection');
  return db.collection<mongo.GridFSFile>('run_files.files');
};

/**
 * Deletes the workflow's run files that no stored run can name: last stored or named (by a run's
 * inputs or a node) before `usedBefore`, which retention sets before the start of the workflow's
 * earliest remaining run, less a margin for a run recorded just after its files were stored.
 */
export async function removeUnusedRunFiles(models: Models, workflowId: string, usedBefore: Date): Promise<void> {
  const unused = await runFileRecords(models)
    .find({
      'metadata.workflow_id': workflowId,
      $or: [
        { 'metadata.last_used_at': { $lt: usedBefore } },
        { 'metadata.last_used_at': { $exists: false }, uploadDate: { $lt: usedBefore } },
      ],
    })
    .toArray();
  for (const file of unused) await deleteIfPresent(models.runFiles, file._id);
}

/** Blocking runs only (PySpur): `files[node]` becomes `initial_inputs[node].files` for nodes given inputs. */
export function mergeFiles(
  initialInputs: Record<string, Record<string, unknown>> | null,
  files: Record<string, string[]> | null,
): Record<string, Record<string, unknown>> | null {
  if (!initialInputs || !files) return initialInputs;
  const merged = { ...initialInputs };
  for (const [nodeId, paths] of Object.entries(files)) {
    if (merged[nodeId]) merged[nodeId] = { ...merged[nodeId], files: paths };
  }
  return merged;
}

import type { Readable } from 'node:stream';
import type { mongo } from 'mongoose';
import { deleteIfPresent } from '../../db/gridfs';
import type { Models } from '../../db/models';
import { NotFoundError } from '../../http/errors';

/** PySpur's FileResponseSchema: `path` is what runs and the UI use to address the file. */
export interface StoredFileInfo {
  name: string;
  path: string;
  size: number;
  created: string;
  workflow_id: string | null;
}

export const FILE_KINDS = ['run_files', 'test_files'] as const;
export type FileKind = (typeof FILE_KINDS)[number];

interface FileMeta {
  workflow_id?: string;
  content_type?: string;
}

/** One path segment: no separator, `.`/`..` or NUL. Anything else names no stored entry (404). */
function isSegment(text: string): boolean {
  return /^[^/\\\0]+$/.test(text) && text !== '.' && text !== '..';
}

function requireSegments(...parts: string[]): void {
  if (!parts.every(isSegment)) throw new NotFoundError('File not found', 'FILE_NOT_FOUND');
}

/**
 * The files runs and editors stored in GridFS: `run_files/<workflow>/<name>` (files in run
 * inputs) and `test_files/<workflow>/<name>` (uploaded test files). Every lookup is by exact
 * stored name or workflow id, so a path can only ever address one of these entries.
 */
export function createStoredFileService(models: Models) {
  const buckets: Record<FileKind, mongo.GridFSBucket> = { run_files: models.runFiles, test_files: models.testFiles };

  function info(file: mongo.GridFSFile): StoredFileInfo {
    const meta = (file.metadata ?? {}) as FileMeta;
    return {
      name: file.filename.split('/').pop() ?? file.filename,
      path: file.filename,
      size: file.length,
      created: file.uploadDate.toISOString(),
      workflow_id: meta.workflow_id ?? file.filename.split('/')[1] ?? null,
    };
  }

  async function find(filter: Record<string, unknown>): Promise<{ kind: FileKind; file: mongo.GridFSFile }[]> {
    const found = await Promise.all(
      (Object.keys(buckets) as FileKind[]).map(async (kind) => (await buckets[kind].find(filter).toArray()).map((file) => ({ kind, file }))),
    );
    return found.flat().sort((a, b) => b.file.uploadDate.getTime() - a.file.uploadDate.getTime());
  }

  async function remove(entries: { kind: FileKind; file: mongo.GridFSFile }[]): Promise<void> {
    for (const { kind, file } of entries) await deleteIfPresent(buckets[kind], file._id);
  }

  return {
    async list(workflowId?: string): Promise<StoredFileInfo[]> {
      return (await find(workflowId === undefined ? {} : { 'metadata.workflow_id': workflowId })).map(({ file }) => info(file));
    },
    async open(kind: FileKind, workflowId: string, name: string): Promise<{ stream: Readable; length: number; contentType: string }> {
      requireSegments(workflowId, name);
      const [file] = await buckets[kind].find({ filename: `${kind}/${workflowId}/${name}` }).sort({ uploadDate: -1 }).limit(1).toArray();
      if (!file) throw new NotFoundError('File not found', 'FILE_NOT_FOUND');
      const meta = (file.metadata ?? {}) as FileMeta;
      return { stream: buckets[kind].openDownloadStream(file._id), length: file.length, contentType: meta.content_type ?? 'application/octet-stream' };
    },
    /** One file of a workflow, whichever kind it is. */
    async removeOne(workflowId: string, name: string): Promise<void> {
      requireSegments(workflowId, name);
      const entries = await find({ filename: { $in: [`run_files/${workflowId}/${name}`, `test_files/${workflowId}/${name}`] } });
      if (entries.length === 0) throw new NotFoundError('File not found', 'FILE_NOT_FOUND');
      await remove(entries);
    },
    async removeForWorkflow(workflowId: string): Promise<void> {
      const entries = await find({ 'metadata.workflow_id': workflowId });
      if (entries.length === 0) throw new NotFoundError('Workflow directory not found', 'FILE_NOT_FOUND');
      await remove(entries);
    },
  };
}

export type StoredFileService = ReturnType<typeof createStoredFileService>;

import type { Readable } from 'node:stream';
import type { mongo } from 'mongoose';
import { deleteIfPresent } from '../../db/gridfs';
import type { Models } from '../../db/models';
import { NotFoundError } from '../../errors';
import { type Page, pageBounds } from '../../db/paging';
import { workspaceScope } from '../../db/workspace-scope';

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
      (Object.keys(buckets) as FileKind[]).map(async (kind) =>
        (await buckets[kind].find(filter).toArray()).map((file) => ({ kind, file })),
      ),
    );
    return found.flat().sort((a, b) => b.file.uploadDate.getTime() - a.file.uploadDate.getTime());
  }

  /**
   * One page of both buckets' files, newest first: their sorted cursors merged as they are read,
   * so only the page is held, however many files there are.
   */
  async function newestFirst(
    filter: Record<string, unknown>,
    { skip, limit }: { skip: number; limit: number },
  ): Promise<mongo.GridFSFile[]> {
    const cursors = FILE_KINDS.map((kind) =>
      buckets[kind]
        .find(filter)
        .sort({ uploadDate: -1, _id: 1 })
        .limit(skip + limit),
    );
    try {
      const heads = await Promise.all(cursors.map((c) => c.next()));
      const out: mongo.GridFSFile[] = [];
      for (let n = 0; n < skip + limit; n++) {
        // The newer head; on equal times the first bucket's (run files before test files).
        let next = -1;
        heads.forEach((head, i) => {
          const best = heads[next];
          if (head && (!best || head.uploadDate > best.uploadDate)) next = i;
        });
        const head = heads[next];
        const cursor = cursors[next];
        if (!head || !cursor) break;
        if (n >= skip) out.push(head);
        heads[next] = await cursor.next();
      }
      return out;
    } finally {
      await Promise.all(cursors.map((c) => c.close()));
    }
  }

  /**
   * GridFS files carry no workspace (the plugin scopes Mongoose's collections, not the driver's
   * buckets): a file is the caller's only if its workflow is, which the scoped Workflow lookup says.
   */
  async function requireOwnWorkflow(workflowId: string): Promise<void> {
    if (!(await models.Workflow.exists({ _id: workflowId })))
      throw new NotFoundError('File not found', 'FILE_NOT_FOUND');
  }

  /** The files of the caller's workspace's workflows (outside any workspace: every file). */
  async function ownFiles(): Promise<Record<string, unknown>> {
    if (workspaceScope.current() === null) return {};
    const ids = (await models.Workflow.find({}, { _id: 1 }).lean<{ _id: string }[]>()).map((w) => w._id);
    return { 'metadata.workflow_id': { $in: ids } };
  }

  async function remove(entries: { kind: FileKind; file: mongo.GridFSFile }[]): Promise<void> {
    for (const { kind, file } of entries) await deleteIfPresent(buckets[kind], file._id);
  }

  return {
    /** One page of the files (of one workflow, or all), newest first. */
    async list(page: Page, workflowId?: string): Promise<StoredFileInfo[]> {
      if (workflowId !== undefined) await requireOwnWorkflow(workflowId);
      const filter = workflowId === undefined ? await ownFiles() : { 'metadata.workflow_id': workflowId };
      return (await newestFirst(filter, pageBounds(page))).map(info);
    },
    async open(
      kind: FileKind,
      workflowId: string,
      name: string,
    ): Promise<{ stream: Readable; length: number; contentType: string }> {
      requireSegments(workflowId, name);
      await requireOwnWorkflow(workflowId);
      const [file] = await buckets[kind]
        .find({ filename: `${kind}/${workflowId}/${name}` })
        .sort({ uploadDate: -1 })
        .limit(1)
        .toArray();
      if (!file) throw new NotFoundError('File not found', 'FILE_NOT_FOUND');
      const meta = (file.metadata ?? {}) as FileMeta;
      return {
        stream: buckets[kind].openDownloadStream(file._id),
        length: file.length,
        contentType: meta.content_type ?? 'application/octet-stream',
      };
    },
    /** One file of a workflow, whichever kind it is. */
    async removeOne(workflowId: string, name: string): Promise<void> {
      requireSegments(workflowId, name);
      await requireOwnWorkflow(workflowId);
      const entries = await find({
        filename: { $in: [`run_files/${workflowId}/${name}`, `test_files/${workflowId}/${name}`] },
      });
      if (entries.length === 0) throw new NotFoundError('File not found', 'FILE_NOT_FOUND');
      await remove(entries);
    },
    async removeForWorkflow(workflowId: string): Promise<void> {
      await requireOwnWorkflow(workflowId);
      const entries = await find({ 'metadata.workflow_id': workflowId });
      if (entries.length === 0) throw new NotFoundError('Workflow directory not found', 'FILE_NOT_FOUND');
      await remove(entries);
    },
  };
}

export type StoredFileService = ReturnType<typeof createStoredFileService>;

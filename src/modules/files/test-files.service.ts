import type { Readable } from 'node:stream';
import { commitStaged, deleteIfPresent, gridFsStaging } from '../../db/gridfs';
import type { Models } from '../../db/models';
import { NotFoundError } from '../../errors';
import type { StagedFile } from '../../http/gridfs-upload-storage';
import { safeFileName, uploadStamp } from './safe-file-name';

interface TestFileMeta {
  workflow_id: string;
  node_id: string;
  content_type: string;
}

/** Test files of workflow nodes, kept in GridFS under PySpur's relative paths. */
export function createTestFileService(models: Models, clock: () => Date = () => new Date()) {
  const bucket = models.testFiles;
  const staging = gridFsStaging(models.conn.db as NonNullable<Models['conn']['db']>, 'test_files');

  async function deleteByFilter(filter: Record<string, unknown>): Promise<void> {
    for (const file of await bucket.find(filter).toArray()) await deleteIfPresent(bucket, file._id);
  }

  return {
    /** Stores each file as `test_files/<workflow>/<stamp>_<name>`; a same-named upload replaces the older one. */
    /** Uploads stream here first (as staged files) and are taken by `upload`. */
    staging,
    async upload(workflowId: string, nodeId: string, files: StagedFile[]): Promise<string[]> {
      const stamp = uploadStamp(clock());
      const paths: string[] = [];
      for (const file of files) {
        const path = `test_files/${workflowId}/${stamp}_${safeFileName(file.originalname)}`;
        const older = await bucket.find({ filename: path }).toArray();
        await commitStaged(staging, file.gridfsId, path, {
          workflow_id: workflowId,
          node_id: nodeId,
          content_type: file.mimetype || 'application/octet-stream',
        });
        for (const f of older) await deleteIfPresent(bucket, f._id);
        paths.push(path);
      }
      return paths;
    },
    async removeForWorkflow(workflowId: string): Promise<void> {
      await deleteByFilter({ 'metadata.workflow_id': workflowId });
    },
    async open(path: string): Promise<{ stream: Readable; length: number; contentType: string }> {
      const [file] = await bucket.find({ filename: path }).sort({ uploadDate: -1 }).limit(1).toArray();
      if (!file) throw new NotFoundError('File not found', 'FILE_NOT_FOUND');
      const meta = file.metadata as Partial<TestFileMeta> | undefined;
      return {
        stream: bucket.openDownloadStream(file._id),
        length: file.length,
        contentType: meta?.content_type ?? 'application/octet-stream',
      };
    },
  };
}

export type TestFileService = ReturnType<typeof createTestFileService>;

import { z } from 'zod';
import { setAttachment } from '../../http/attachment';
import { defineRoute, type MountableRoute } from '../../http/route';
import type { TestFileService } from './test-files.service';

/** Serves a stored test file by the path upload_test_files returned (PySpur's `/files/…`). */
export function fileRoutes(testFiles: TestFileService): MountableRoute[] {
  return [
    defineRoute({
      method: 'get', path: '/files/test_files/{workflow_id}/{file_name}', summary: 'Download an uploaded test file', tags: ['files'],
      params: z.object({ workflow_id: z.string().min(1).max(200), file_name: z.string().min(1).max(300) }),
      response: { contentType: 'application/octet-stream', description: 'The file' }, errors: [404],
      handler: async ({ params }, ctx) => {
        const file = await testFiles.open(`test_files/${params.workflow_id}/${params.file_name}`);
        ctx.type = file.contentType;
        ctx.length = file.length;
        setAttachment(ctx, params.file_name);
        return file.stream;
      },
    }),
  ];
}

import { z } from 'zod';
import { setAttachment } from '../../http/attachment';
import { WHOLE_LIST_PAGE_MAX, WholeListQuery } from '../../http/pagination';
import { defineRoute, type MountableRoute } from '../../http/route';
import { frameableBySameOrigin } from '../../http/security-headers';
import { FILE_KINDS, type StoredFileService } from './stored-files.service';

const tags = ['files'];
const segment = z.string().min(1).max(300);
const WorkflowParams = z.object({ workflow_id: segment });
const FileParams = z.object({ workflow_id: segment, file_name: segment });
const FileInfo = z.object({
  name: z.string(),
  path: z.string(),
  size: z.number().int(),
  created: z.string(),
  workflow_id: z.string().nullable(),
});
const Message = z.object({ message: z.string() });

/** Types the editor previews (<img>, <video>, a PDF <iframe>) and that run no script: served inline. */
const INLINE = /^(image\/(png|jpeg|gif|webp)|application\/pdf|video\/(mp4|webm|ogg)|audio\/[\w.+-]+)$/;

/** Run files and test files (PySpur's `/files/…`): listed, served by their stored path, deleted. */
export function fileRoutes(files: StoredFileService): MountableRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/files/',
      summary: `Stored run and test files, newest first, ${WHOLE_LIST_PAGE_MAX} per page unless page_size says fewer`,
      tags,
      query: WholeListQuery,
      response: z.array(FileInfo),
      handler: ({ query }) => files.list(query),
    }),
    defineRoute({
      method: 'get',
      path: '/files/{workflow_id}',
      summary: `A workflow's files, newest first, ${WHOLE_LIST_PAGE_MAX} per page unless page_size says fewer`,
      tags,
      params: WorkflowParams,
      query: WholeListQuery,
      response: z.array(FileInfo),
      errors: [404],
      handler: ({ params, query }) => files.list(query, params.workflow_id),
    }),
    ...FILE_KINDS.map((kind) =>
      defineRoute({
        method: 'get',
        path: `/files/${kind}/{workflow_id}/{file_name}`,
        summary: `Download a stored file by its path (${kind})`,
        tags,
        params: FileParams,
        response: { contentType: 'application/octet-stream', description: 'The file, streamed' },
        errors: [404],
        handler: async ({ params }, ctx) => {
          const file = await files.open(kind, params.workflow_id, params.file_name);
          const type = file.contentType.toLowerCase().split(';')[0]?.trim() ?? '';
          ctx.type = file.contentType;
          ctx.length = file.length;
          // The editor shows a file in an <iframe> of its own page (a PDF, or any other in a sandboxed one).
          if (INLINE.test(type)) {
            ctx.set('Content-Disposition', 'inline');
            frameableBySameOrigin(ctx);
          } else {
            // Anything that could run script (HTML, SVG) is a download, and sandboxed if opened anyway.
            setAttachment(ctx, params.file_name);
            frameableBySameOrigin(ctx, 'sandbox');
          }
          return file.stream;
        },
      }),
    ),
    defineRoute({
      method: 'delete',
      path: '/files/{workflow_id}/{file_name}',
      permission: 'build',
      audit: { action: 'test_file.delete', target: 'test_file' },
      summary: 'Delete one file of a workflow',
      tags,
      params: FileParams,
      response: Message,
      errors: [404],
      handler: async ({ params }) => {
        await files.removeOne(params.workflow_id, params.file_name);
        return { message: 'File deleted successfully' };
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/files/{workflow_id}',
      permission: 'build',
      audit: { action: 'test_files.delete' },
      summary: "Delete all of a workflow's files",
      tags,
      params: WorkflowParams,
      response: Message,
      errors: [404],
      handler: async ({ params }) => {
        await files.removeForWorkflow(params.workflow_id);
        return { message: 'All workflow files deleted successfully' };
      },
    }),
  ];
}

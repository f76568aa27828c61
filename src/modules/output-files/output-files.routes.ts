import { z } from 'zod';
import { setAttachment } from '../../http/attachment';
import { WHOLE_LIST_PAGE_MAX, WholeListQuery } from '../../http/pagination';
import { defineRoute, type MountableRoute } from '../../http/route';
import { contentTypeOf, OutputFileDeleted, OutputFileIdParams, OutputFileResponse } from './output-files.schemas';
import type { OutputFileService } from './output-files.service';

const tags = ['output-files'];

export function outputFileRoutes(outputFiles: OutputFileService): MountableRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/of/',
      summary: `Output files in storage order, ${WHOLE_LIST_PAGE_MAX} per page unless page_size says fewer`,
      tags,
      query: WholeListQuery,
      response: z.array(OutputFileResponse),
      handler: ({ query }) => outputFiles.list(query),
    }),
    defineRoute({
      method: 'get',
      path: '/of/{output_file_id}/',
      summary: 'Get an output file',
      tags,
      params: OutputFileIdParams,
      response: OutputFileResponse,
      errors: [404],
      handler: ({ params }) => outputFiles.get(params.output_file_id),
    }),
    defineRoute({
      method: 'get',
      path: '/of/{output_file_id}/download/',
      summary: 'Download an output file',
      tags,
      params: OutputFileIdParams,
      response: { contentType: 'application/octet-stream', description: 'The file, streamed' },
      errors: [404],
      handler: async ({ params }, ctx) => {
        const file = await outputFiles.download(params.output_file_id);
        ctx.type = contentTypeOf(file.fileName);
        ctx.length = file.length;
        setAttachment(ctx, file.fileName);
        return file.stream;
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/of/{output_file_id}/',
      permission: 'build',
      summary: 'Delete an output file and its bytes; runs keep existing',
      tags,
      params: OutputFileIdParams,
      response: OutputFileDeleted,
      errors: [404],
      handler: async ({ params }) => {
        await outputFiles.remove(params.output_file_id);
        return { message: 'Output file deleted' };
      },
    }),
  ];
}

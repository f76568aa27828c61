import { z } from '../../zod';

export const OutputFileIdParams = z.object({ output_file_id: z.string().min(1).max(200) });

export const OutputFileResponse = z
  .object({
    id: z.string(),
    file_name: z.string(),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .openapi('OutputFileResponse');
export type OutputFileResponse = z.output<typeof OutputFileResponse>;

export const OutputFileDeleted = z.object({ message: z.literal('Output file deleted') });

/** PySpur's download content types, by file name suffix. */
const CONTENT_TYPES: Record<string, string> = {
  '.csv': 'text/csv',
  '.json': 'application/json',
  '.txt': 'text/plain',
  '.jsonl': 'application/x-ndjson',
};

export function contentTypeOf(fileName: string): string {
  const ext = /\.[^.]+$/.exec(fileName)?.[0].toLowerCase() ?? '';
  return CONTENT_TYPES[ext] ?? 'application/octet-stream';
}

import { NodeExecutionError } from '../../errors.js';
import type { NodeExecutionContext } from '../../types.js';
import type { ContentPart } from './types.js';

const DATA_URI = /^data:([\w.+-]+\/[\w.+-]+);base64,([A-Za-z0-9+/=\s]*)$/;

/**
 * The file a `url_variables.file` path points at, as a content part with its bytes unchanged: a
 * data URI, or a stored run file or test file by its path (the api stores data URIs of run
 * inputs as run files, so only the path travels through Temporal). Absent value: no part.
 */
export async function filePart(
  value: unknown,
  variable: string,
  ctx: NodeExecutionContext,
): Promise<ContentPart | null> {
  if (value === undefined || value === null || value === '') return null;
  if (typeof value !== 'string')
    throw new NodeExecutionError(
      `url_variables.file '${variable}' must be a data URI or a stored file path, not ${typeof value}`,
    );
  const uri = DATA_URI.exec(value);
  if (uri) return { type: 'file', mimeType: uri[1] as string, base64: (uri[2] as string).replace(/\s/g, '') };
  if (/^https?:\/\//i.test(value))
    throw new NodeExecutionError(
      `url_variables.file '${variable}': web URLs are not fetched; pass a data URI or an uploaded file`,
    );
  const stored = await ctx.readFile?.(value);
  if (!stored) throw new NodeExecutionError(`url_variables.file '${variable}': no stored file '${value}'`);
  return { type: 'file', mimeType: stored.mimeType, base64: stored.bytes.toString('base64'), name: stored.name };
}

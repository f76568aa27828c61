import getRawBody from 'raw-body';
import type { Context } from 'koa';
import { BadRequestError, PayloadTooLargeError, RequestValidationError } from './errors';

/** Marks "the client sent no body at all", which FastAPI reports as a missing `body`. */
export const NO_BODY = Symbol('no-body');

/**
 * Reads and parses a JSON request body with a byte limit, answering as FastAPI does: a body over
 * the limit is refused while streaming (413), malformed JSON is a 422 `json_invalid` item whose
 * `loc` carries the character offset.
 */
export async function readJsonBody(ctx: Context, limitBytes: number): Promise<unknown> {
  let text: string;
  try {
    text = await getRawBody(ctx.req, { limit: limitBytes, encoding: 'utf8', length: ctx.request.length });
  } catch (err) {
    const type = (err as { type?: string }).type;
    if (type === 'entity.too.large') throw new PayloadTooLargeError(`Request body exceeds ${limitBytes} bytes`);
    throw new BadRequestError(`Could not read the request body: ${(err as Error).message}`);
  }
  if (text.trim() === '') return NO_BODY;
  try {
    return JSON.parse(text);
  } catch (err) {
    const message = (err as Error).message;
    const offset = Number(/position (\d+)/.exec(message)?.[1] ?? 0);
    throw new RequestValidationError([
      { type: 'json_invalid', loc: ['body', offset], msg: 'JSON decode error', input: {}, ctx: { error: message } },
    ]);
  }
}

import getRawBody from 'raw-body';
import type { Context } from 'koa';
import { BadRequestError, PayloadTooLargeError, RequestValidationError } from '../errors';

/** Marks "the client sent no body at all", which FastAPI reports as a missing `body`. */
export const NO_BODY = Symbol('no-body');

/**
 * Deepest nesting of arrays and objects a body may have. JSON.parse takes any depth, but
 * everything after it recurses (JSON.stringify for storage and for echoing `input` in a 422, BSON,
 * zod) and overflows the stack at a few thousand levels, which would be a 500. No PySpur payload
 * comes near this.
 */
export const MAX_JSON_DEPTH = 256;

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
    if (type === 'entity.too.large')
      throw new PayloadTooLargeError(
        `Request body exceeds ${limitBytes} bytes, the limit per request (SPUR_MAX_JSON_BYTES)`,
      );
    throw new BadRequestError(`Could not read the request body: ${(err as Error).message}`);
  }
  if (text.trim() === '') return NO_BODY;
  return parseJsonText(text);
}

/** JSON text parsed as a request body: malformed or too deep is a 422 `json_invalid` item. */
export function parseJsonText(text: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    const message = (err as Error).message;
    throw jsonInvalid(Number(/position (\d+)/.exec(message)?.[1] ?? 0), message);
  }
  const tooDeep = offsetBeyondDepth(text, MAX_JSON_DEPTH);
  if (tooDeep >= 0) throw jsonInvalid(tooDeep, `Nesting deeper than ${MAX_JSON_DEPTH} levels`);
  return value;
}

function jsonInvalid(offset: number, error: string): RequestValidationError {
  return new RequestValidationError([
    { type: 'json_invalid', loc: ['body', offset], msg: 'JSON decode error', input: {}, ctx: { error } },
  ]);
}

/** Offset of the first `[` or `{` that opens level `max + 1` of valid JSON text (outside strings), else -1. */
export function offsetBeyondDepth(text: string, max: number): number {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: the next character is escaped
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return i;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return -1;
}

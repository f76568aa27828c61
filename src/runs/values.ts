import type { z } from 'zod';
import type { Values } from '../db/values';
import { VALUE_REF_KEY, reservedKeyPath } from '../engine/value-ref';
import { RequestValidationError } from '../errors';

/** Why a client's value with the reserved key is refused (a 422 naming where it is). */
export const RESERVED_KEY_MESSAGE = `'${VALUE_REF_KEY}' is reserved for the references Spur writes itself and may not appear in a value`;

/**
 * A request field that carries run values, refused (422) when the reserved key appears anywhere in
 * it: a client never has a reason to send one, and the refusal says so before anything is stored.
 */
export function withoutReservedKey<S extends z.ZodType>(schema: S): S {
  return schema.superRefine((value, ctx) => {
    const path = reservedKeyPath(value);
    if (path)
      ctx.addIssue({ code: 'custom', message: RESERVED_KEY_MESSAGE, path, params: { pydanticType: 'value_error' } });
  });
}

/**
 * A client's values on their way into a run: large parts stored under `scope` (the run), so the
 * workflow input and the run record carry references. The reserved key is refused here too, so a
 * route that forgot `withoutReservedKey` still cannot hand one on; a value over the limit is a 413.
 */
export async function storeClientValues<T>(values: Values, scope: string, value: T, what: string): Promise<T> {
  const path = reservedKeyPath(value);
  if (path) {
    throw new RequestValidationError([
      {
        type: 'value_error',
        loc: ['body', what, ...path],
        msg: `Value error, ${RESERVED_KEY_MESSAGE}`,
        input: null,
        ctx: { error: {} },
      },
    ]);
  }
  return values.externalize(scope, value, what);
}

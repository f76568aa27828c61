import type { Values } from '../../db/values';
import { VALUE_REF_KEY, containsValueRef } from '../../engine/value-ref';
import { BadRequestError } from '../../http/errors';

/**
 * A client's values on their way into a run: large parts stored under `scope` (the run), so the
 * workflow input and the run record carry references. The reserved key is refused (a client
 * could otherwise smuggle in a reference); a value over the limit is a 413 naming it.
 */
export async function storeClientValues<T>(values: Values, scope: string, value: T, what: string): Promise<T> {
  if (containsValueRef(value)) throw new BadRequestError(`${what} may not use the reserved key '${VALUE_REF_KEY}'`, 'RESERVED_KEY');
  return values.externalize(scope, value, what);
}

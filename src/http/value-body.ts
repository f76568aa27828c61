import type { Context } from 'koa';
import type { Values } from '../db/values';

/**
 * The body of a route that carries run values: as is when it holds no reference, else streamed
 * with each stored value spliced in (the api never holds a 50 MB value several times over).
 */
export function valueBody(values: Values) {
  return (ctx: Context, result: unknown): unknown => {
    if (!values.holdsRefs(result)) return result;
    ctx.type = 'application/json';
    return values.jsonStream(result);
  };
}

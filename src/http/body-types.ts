import type { Context, Middleware } from 'koa';
import { isStateChanging } from './methods';

export const JSON_TYPE = 'application/json';
export const MULTIPART_TYPE = 'multipart/form-data';
export const FORM_TYPE = 'application/x-www-form-urlencoded';

/** A body is coming: a length over 0, or a chunked one. */
function carriesBody(ctx: Context): boolean {
  return ctx.get('transfer-encoding') !== '' || (ctx.request.length ?? 0) > 0;
}

/**
 * Refuses (415) a state-changing request whose body is not of a type its route reads. A page of
 * another site can send text/plain, urlencoded and multipart bodies without a CORS preflight, and
 * a JSON route must not read such a body as JSON; `application/json` itself needs a preflight,
 * which only trusted origins pass.
 */
export function bodyTypeCheck(accepted: (method: string, path: string) => readonly string[]): Middleware {
  return async function refuseOtherBodyTypes(ctx, next) {
    if (!isStateChanging(ctx.method) || !carriesBody(ctx)) return next();
    const types = accepted(ctx.method, ctx.path);
    if (types.length > 0 && ctx.is(...types)) return next();
    const given = ctx.get('content-type');
    ctx.status = 415;
    ctx.body = {
      detail: `Unsupported Content-Type ${given ? `'${given.slice(0, 100)}'` : '(none)'}: the body of ${ctx.method} ${ctx.path.slice(0, 200)} must be ${types.join(' or ')}`,
    };
  };
}

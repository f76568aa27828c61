import type { Context } from 'koa';

/**
 * An ASCII stand-in for a file name: accents dropped (`résumé` → `resume`), anything else outside
 * printable ASCII replaced by `_`.
 */
export function asciiFileName(name: string): string {
  return name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^\x20-\x7e]/gu, '_');
}

/**
 * Sets `Content-Disposition: attachment` for a stored file name. The header stays ASCII: node
 * writes non-ASCII header bytes inconsistently (a Latin-1 `é` arrives as `ý` when the body is
 * sent in one piece), so any other name travels as `filename*=UTF-8''…` with an ASCII
 * `filename=` for old clients. A plain token goes bare, as PySpur sends it (`filename=out.jsonl`).
 */
export function setAttachment(ctx: Context, fileName: string): void {
  if (/^[\w.-]+$/.test(fileName)) ctx.set('Content-Disposition', `attachment; filename=${fileName}`);
  else {
    // koa's attachment() also sets the type from the extension; the route has chosen it already.
    const type = ctx.type;
    ctx.attachment(fileName, { fallback: asciiFileName(fileName) });
    if (type) ctx.type = type;
  }
}

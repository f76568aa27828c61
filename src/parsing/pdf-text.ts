import { readFileSync } from 'node:fs';
import path from 'node:path';
import { definePDFJSModule, extractText, getDocumentProxy } from 'unpdf';
import { ByteBudget } from './limits';

/**
 * PDF text through PDF.js (unpdf's build) with every decoded stream counted. PDF.js decodes a
 * stream (FlateDecode, LZW, ASCII85, …, decryption included) into a buffer that grows as it
 * reads, or through DecompressionStream; neither has a size limit, and both allocate outside the
 * JavaScript heap, which the thread's heap limit does not cover. So this thread loads PDF.js
 * with a counter at both places: each growth of a decode buffer and each decompressed chunk is
 * taken from the parse's budget before it is kept, and over the budget PDF.js cannot go on.
 *
 * The counter goes in by replacing two exact pieces of unpdf's bundled PDF.js. If an update of
 * unpdf changes them, PDFs are refused (the error names this file) rather than read unbounded.
 */

const HOOK = Symbol.for('spur.pdfDecodedBytes');
const CALL = `globalThis[Symbol.for(${JSON.stringify(HOOK.description)})]`;

const PATCHES: [original: string, bounded: string][] = [
  // DecodeStream.ensureBuffer: `s` is the size of the new buffer, `n` the old one.
  [
    'ensureBuffer(e){const n=this.buffer;if(e<=n.byteLength)return n;let s=this.minBufferLength;for(;s<e;)s*=2;',
    `ensureBuffer(e){const n=this.buffer;if(e<=n.byteLength)return n;let s=this.minBufferLength;for(;s<e;)s*=2;${CALL}(s-n.byteLength);`,
  ],
  // DecodeStream.asyncGetBytesFromDecompressionStream: each chunk `c` of the output.
  [
    'for await(const c of s)r.push(c),o+=c.byteLength;',
    `for await(const c of s)${CALL}(c.byteLength),r.push(c),o+=c.byteLength;`,
  ],
];

type Hook = (bytes: number) => void;
const hookSlot = globalThis as unknown as Record<symbol, Hook | undefined>;

let loaded: Promise<void> | undefined;

/** Loads the counting PDF.js once per thread (a parse thread does it before it takes jobs). */
export function loadCountingPdfjs(): Promise<void> {
  loaded ??= (async () => {
    const bundle = path.join(path.dirname(require.resolve('unpdf')), 'pdfjs.mjs');
    let source = readFileSync(bundle, 'utf8');
    for (const [original, bounded] of PATCHES) {
      if (source.split(original).length !== 2)
        throw new Error(
          `PDF parsing is unavailable: ${bundle} no longer has the code src/parsing/pdf-text.ts counts decoded bytes in`,
        );
      source = source.replace(original, () => bounded);
    }
    const url = `data:text/javascript;base64,${Buffer.from(source).toString('base64')}`;
    await definePDFJSModule(() => import(url));
  })();
  return loaded;
}

/** The text of each page; decoded streams count against `budget`. */
export async function pdfPages(bytes: Uint8Array, budget: ByteBudget): Promise<string[]> {
  await loadCountingPdfjs();
  hookSlot[HOOK] = (n) => budget.take(n);
  try {
    // No eval of font programs (PDF.js's fast path compiles glyph outlines into functions).
    const pdf = await getDocumentProxy(new Uint8Array(bytes), { isEvalSupported: false, verbosity: 0 });
    try {
      const { text } = await extractText(pdf, { mergePages: false });
      return text;
    } finally {
      await pdf.destroy();
    }
  } finally {
    hookSlot[HOOK] = undefined;
    // PDF.js wraps or swallows the error of a stream it could not decode: the budget's own error wins.
    budget.check();
  }
}

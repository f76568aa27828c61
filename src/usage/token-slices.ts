/** The longest slice a prompt is counted in: byte-pair encoding is quadratic in a word's length. */
export const SLICE_CHARS = 64;

/**
 * A prompt's tokens counted slice by slice, each at most SLICE_CHARS long and cut before a
 * whitespace where there is one, so the count costs time linear in the prompt (a 4 000-character
 * word costs seconds whole). Cutting a long word can only add tokens: the estimate errs high, which
 * is the safe side for a budget's worst case.
 */
export function countInSlices(text: string, count: (slice: string) => number): number {
  let tokens = 0;
  for (let start = 0; start < text.length;) {
    let end = Math.min(start + SLICE_CHARS, text.length);
    if (end < text.length) {
      const lastSpace = text.slice(start + 1, end).search(/\s\S*$/);
      if (lastSpace >= 0) end = start + 1 + lastSpace;
    }
    tokens += count(text.slice(start, end));
    start = end;
  }
  return tokens;
}

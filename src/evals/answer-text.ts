/**
 * How texts are read before they are compared: numbers found as PySpur's benchmarks find them,
 * choice letters, normalised words. Pure functions of their inputs.
 */

const NUMBER = /-?[\d,]*\.?\d+/g;

/** The number after the last `delimiter` when there is one, else the last number in the text ('' for none). */
export function findNumber(text: string, delimiter: string): string {
  if (delimiter && text.includes(delimiter)) {
    const after = text.slice(text.lastIndexOf(delimiter) + delimiter.length);
    const first = after.match(NUMBER)?.[0];
    if (first !== undefined) return first.replaceAll(',', '');
  }
  return (text.match(NUMBER)?.at(-1) ?? '').replaceAll(',', '');
}

/** Lower case, punctuation dropped, whitespace collapsed. */
export function normalizeText(text: string): string {
  return text
    .toLowerCase()
    .normalize('NFKC')
    .replace(/[\p{P}\p{S}]+/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/**
 * The choice letter a text gives: `Answer: C` first, then a lone `(C)` or `C)` or `C.`, then a text
 * that is only the letter. Null when none of the allowed letters is given that way.
 */
export function choiceLetter(text: string, letters: string): string | null {
  const set = `[${letters}${letters.toLowerCase()}]`;
  const patterns = [
    new RegExp(`answer\\s*(?:is)?\\s*[:：]?\\s*\\(?(${set})\\b`, 'i'),
    new RegExp(`(?:^|\\s)\\((${set})\\)`),
    new RegExp(`^\\s*(${set})[).:]`, 'm'),
    new RegExp(`^\\s*(${set})\\s*$`),
  ];
  for (const pattern of patterns) {
    const found = pattern.exec(text)?.[1];
    if (found) return found.toUpperCase();
  }
  return null;
}

/** A cell or an output as the text a scorer reads: strings as they are, anything else as JSON. */
export function asText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

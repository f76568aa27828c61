/**
 * Python's `float(x)` for JSON-like values: numbers as they are, booleans as 1/0, strings in
 * Python's float syntax (surrounding whitespace, `_` digit separators, `inf`/`nan` allowed).
 * Returns undefined where Python raises (None, '', `abc`, lists, dicts).
 */
const DIGITS = String.raw`\d(?:_?\d)*`;
const DECIMAL = new RegExp(String.raw`^[+-]?(?:(?:${DIGITS})?\.${DIGITS}|${DIGITS}\.?)(?:[eE][+-]?${DIGITS})?$`);
const SPECIAL = /^([+-]?)(inf|infinity|nan)$/i;

export function pyFloat(value: unknown): number | undefined {
  if (typeof value === 'number') return value;
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value === 'bigint') return Number(value);
  if (typeof value !== 'string') return undefined;
  const text = value.trim();
  if (DECIMAL.test(text)) return Number(text.replaceAll('_', ''));
  const special = SPECIAL.exec(text);
  if (special === null) return undefined;
  if (special[2]?.toLowerCase() === 'nan') return Number.NaN;
  return special[1] === '-' ? Number.NEGATIVE_INFINITY : Number.POSITIVE_INFINITY;
}

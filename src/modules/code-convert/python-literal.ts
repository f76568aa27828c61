/**
 * JSON values as Python literals that evaluate back to exactly the same value. Every string (keys
 * included) is one double-quoted literal in which nothing can end it early or change its meaning:
 * backslashes, quotes, line breaks and every invisible character (controls, format characters such
 * as bidirectional overrides, separators, lone surrogates) are escapes; the rest is kept as written.
 */

const INDENT = '    ';
/** Characters written as escapes: Python could read them as the end of a line, or a reader could not see them. */
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}]/u;
const SHORT_ESCAPES: Readonly<Record<string, string>> = {
  '\\': '\\\\',
  '"': '\\"',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
};
/** A list this short, of short items, stays on one line. */
const INLINE_ITEMS = 3;
const INLINE_ITEM_CHARS = 40;

function hexEscape(codePoint: number): string {
  if (codePoint < 0x100) return `\\x${codePoint.toString(16).padStart(2, '0')}`;
  if (codePoint < 0x10000) return `\\u${codePoint.toString(16).padStart(4, '0')}`;
  return `\\U${codePoint.toString(16).padStart(8, '0')}`;
}

/** A Python string literal of `text` (iterated by code point: an unpaired surrogate is one escape). */
export function pyString(text: string): string {
  let out = '"';
  for (const char of text) {
    const short = SHORT_ESCAPES[char];
    if (short !== undefined) out += short;
    else if (INVISIBLE.test(char)) out += hexEscape(char.codePointAt(0) as number);
    else out += char;
  }
  return `${out}"`;
}

/** A JSON number as Python reads it back: integers as ints, the rest in JavaScript's shortest round-trip form. */
function pyNumber(value: number): string {
  if (!Number.isFinite(value)) throw new Error(`${value} is not a JSON number`);
  return String(value);
}

/** `value` (JSON: null, booleans, numbers, strings, arrays, objects) as a Python literal, nested blocks indented from `depth`. */
export function pyValue(value: unknown, depth = 0): string {
  if (value === null || value === undefined) return 'None';
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (typeof value === 'number') return pyNumber(value);
  if (typeof value === 'string') return pyString(value);
  if (Array.isArray(value)) return pyList(value, depth);
  if (typeof value === 'object') return pyDict(value as Record<string, unknown>, depth);
  throw new Error(`a ${typeof value} is not a JSON value`);
}

function pyList(items: unknown[], depth: number): string {
  if (items.length === 0) return '[]';
  const written = items.map((item) => pyValue(item, depth + 1));
  if (written.length <= INLINE_ITEMS && written.every((w) => w.length < INLINE_ITEM_CHARS && !w.includes('\n')))
    return `[${written.join(', ')}]`;
  const inner = INDENT.repeat(depth + 1);
  return `[\n${written.map((w) => `${inner}${w},`).join('\n')}\n${INDENT.repeat(depth)}]`;
}

function pyDict(object: Record<string, unknown>, depth: number): string {
  const entries = Object.entries(object);
  if (entries.length === 0) return '{}';
  const inner = INDENT.repeat(depth + 1);
  const lines = entries.map(([key, item]) => `${inner}${pyString(key)}: ${pyValue(item, depth + 1)},`);
  return `{\n${lines.join('\n')}\n${INDENT.repeat(depth)}}`;
}

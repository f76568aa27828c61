/** Jinja's `tojson`: Python's `json.dumps(value, sort_keys=True, indent=indent)`, made HTML-safe. */
export function tojson(value: unknown, indent?: number): string {
  return htmlSafe(pyJsonDumps(value, indent, ''));
}

/** `json.dumps` with its default ASCII escaping and Python's separators. */
function pyJsonDumps(value: unknown, indent: number | undefined, pad: string): string {
  const inner = indent === undefined ? '' : `${pad}${' '.repeat(indent)}`;
  const join = (items: string[], open: string, close: string) => {
    if (items.length === 0) return `${open}${close}`;
    if (indent === undefined) return `${open}${items.join(', ')}${close}`;
    return `${open}\n${inner}${items.join(`,\n${inner}`)}\n${pad}${close}`;
  };
  if (Array.isArray(value))
    return join(
      value.map((v) => pyJsonDumps(v, indent, inner)),
      '[',
      ']',
    );
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value).sort();
    const record = value as Record<string, unknown>;
    const items = keys
      .filter((k) => record[k] !== undefined)
      .map((k) => `${asciiJson(k)}: ${pyJsonDumps(record[k], indent, inner)}`);
    return join(items, '{', '}');
  }
  if (value === undefined) return 'null';
  return asciiJson(value);
}

function asciiJson(value: unknown): string {
  return JSON.stringify(value).replace(
    /[\u007f-\uffff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/** Jinja's `tojson` escapes the HTML-significant characters so the output is safe in markup. */
function htmlSafe(json: string): string {
  return json.replace(/[<>&']/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

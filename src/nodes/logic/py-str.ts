/**
 * Python's `str(x)` for JSON-like values, so router string operators compare what PySpur compares:
 * None → `None`, booleans → `True`/`False`, floats in repr form (`1e-05`, `1e+16`), lists and
 * dicts in repr form (`['a', 1]`, `{'k': True}`). JSON cannot tell `1.0` from `1`; both print `1`.
 */
export function pyStr(value: unknown): string {
  return typeof value === 'string' ? value : pyRepr(value);
}

export function pyRepr(value: unknown): string {
  if (value === null || value === undefined) return 'None';
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (typeof value === 'number') return numberRepr(value);
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'string') return stringRepr(value);
  if (Array.isArray(value)) return `[${value.map(pyRepr).join(', ')}]`;
  if (typeof value === 'object') {
    const entries = Object.entries(value).map(([k, v]) => `${stringRepr(k)}: ${pyRepr(v)}`);
    return `{${entries.join(', ')}}`;
  }
  return String(value);
}

function numberRepr(n: number): string {
  if (Number.isNaN(n)) return 'nan';
  if (!Number.isFinite(n)) return n > 0 ? 'inf' : '-inf';
  if (Number.isInteger(n)) return Number.isSafeInteger(n) ? String(n) : BigInt(n).toString();
  // Shortest round-trip digits (as both languages use), laid out by Python's repr rules.
  const [mantissa = '', exp = '0'] = n.toExponential().split('e');
  const exponent = Number(exp);
  if (exponent >= -4 && exponent < 16) return String(n);
  const sign = exponent < 0 ? '-' : '+';
  return `${mantissa}e${sign}${String(Math.abs(exponent)).padStart(2, '0')}`;
}

function stringRepr(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = '';
  for (const ch of s) {
    const code = ch.codePointAt(0) ?? 0;
    if (ch === '\\' || ch === quote) out += `\\${ch}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, '0')}`;
    else out += ch;
  }
  return `${quote}${out}${quote}`;
}

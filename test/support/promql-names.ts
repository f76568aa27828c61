/** PromQL's words that are neither functions (those are followed by `(`) nor metric names. */
const KEYWORDS = new Set([
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'bool',
  'and',
  'or',
  'unless',
  'offset',
  'inf',
  'nan',
]);

/**
 * The metric names a PromQL expression selects: string literals, label matchers (`{…}`), ranges
 * (`[…]`) and grouping lists (`by (…)`) removed, then every identifier that is no function call,
 * keyword or number. Enough for a dashboard's expressions; not a PromQL parser.
 */
export function metricNamesIn(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  const names: string[] = [];
  for (const match of bare.matchAll(/[A-Za-z_:][A-Za-z0-9_:]*/g)) {
    const word = match[0];
    const next = bare.slice((match.index ?? 0) + word.length).trimStart();
    if (next.startsWith('(') || KEYWORDS.has(word.toLowerCase())) continue;
    names.push(word);
  }
  return names;
}

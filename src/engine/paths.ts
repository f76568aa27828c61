/**
 * PySpur's brace-less dotted addressing: `PredTitle.field.sub` into a node's input
 * `{pred_title: output}`. Used by OutputNode `output_map`, router `variable` and similar fields.
 *
 * PySpur splits on `.` and walks one segment per level. Here a key may itself contain dots (a
 * title like `a.b`, a field like `x.y`): at every object level the longest run of segments that
 * names an own key is tried first, then shorter runs, backtracking if the rest of the path does
 * not resolve. Plain paths therefore resolve exactly as in PySpur. A non-negative integer segment
 * indexes into an array. Only own properties count (no `constructor`, `length`, …).
 */
export interface PathLookup {
  /** True when every segment named an existing key or index (the value may still be null). */
  found: boolean;
  /** The value at the path; undefined when not found. */
  value: unknown;
}

const NOT_FOUND: PathLookup = { found: false, value: undefined };

export function valueAtPath(input: unknown, path: string): PathLookup {
  if (path === '') return NOT_FOUND;
  return walk(input, path.split('.'));
}

function walk(current: unknown, segments: string[]): PathLookup {
  if (segments.length === 0) return { found: true, value: current };
  if (Array.isArray(current)) {
    const [head, ...rest] = segments;
    if (head === undefined || !/^\d+$/.test(head)) return NOT_FOUND;
    const index = Number(head);
    return index < current.length ? walk(current[index], rest) : NOT_FOUND;
  }
  if (current === null || typeof current !== 'object') return NOT_FOUND;
  for (let take = segments.length; take >= 1; take -= 1) {
    const key = segments.slice(0, take).join('.');
    if (!Object.hasOwn(current, key)) continue;
    const lookup = walk((current as Record<string, unknown>)[key], segments.slice(take));
    if (lookup.found) return lookup;
  }
  return NOT_FOUND;
}

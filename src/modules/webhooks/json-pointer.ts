/** The tokens of an RFC 6901 pointer (`/a~1b/0` → ['a/b', '0']); '' is the whole document. */
export function pointerTokens(pointer: string): string[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
}

const ARRAY_INDEX = /^(0|[1-9][0-9]*)$/;

/**
 * What the pointer names in `doc`, undefined when it names nothing. Only own members count (a
 * pointer `/__proto__` names nothing in `{}`), and array indexes are RFC 6901's (no `-`, no `01`).
 */
export function resolvePointer(doc: unknown, pointer: string): unknown {
  let at: unknown = doc;
  for (const token of pointerTokens(pointer)) {
    if (Array.isArray(at)) {
      if (!ARRAY_INDEX.test(token)) return undefined;
      at = at[Number(token)];
    } else if (at !== null && typeof at === 'object' && Object.hasOwn(at, token)) {
      at = (at as Record<string, unknown>)[token];
    } else return undefined;
  }
  return at;
}

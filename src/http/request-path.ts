/**
 * Why a request path is not in the one spelling the gate and the routers match, or null when it
 * is. Matching is exact and case-sensitive on the raw path, so any second spelling of a route
 * (`//api/wf/`, `/api/%77f/`, `/x/../api/wf/`, `/api\wf/`) would otherwise be a path a proxy, the
 * gate or a router might read differently from the others. No client needs one: browsers resolve
 * dot segments, and URL encoders leave letters, digits and `-._~` unescaped.
 */
export function nonCanonicalPath(path: string): string | null {
  if (!path.startsWith('/')) return 'it does not start with /';
  if (path.includes('//')) return 'it has an empty segment (//)';
  if (path.includes('\\')) return 'it has a backslash';
  for (const segment of path.split('/')) {
    if (segment === '.' || segment === '..') return `it has a '${segment}' segment`;
  }
  for (let i = path.indexOf('%'); i !== -1; i = path.indexOf('%', i + 1)) {
    const hex = path.slice(i + 1, i + 3);
    if (!/^[0-9A-Fa-f]{2}$/.test(hex)) return 'it has a malformed percent-escape';
    const byte = Number.parseInt(hex, 16);
    if (mustNotBeEscaped(byte)) return `it escapes '${String.fromCharCode(byte)}' (%${hex}), which is sent as itself`;
    if (byte === 0x2f || byte === 0x5c) return `it has an escaped separator (%${hex})`;
    if (byte < 0x20 || byte === 0x7f) return `it has an escaped control character (%${hex})`;
  }
  return null;
}

/** RFC 3986's unreserved characters: a URL that escapes one names the same resource as one that does not. */
function mustNotBeEscaped(byte: number): boolean {
  const c = String.fromCharCode(byte);
  return /^[A-Za-z0-9._~-]$/.test(c);
}

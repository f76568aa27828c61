/** The names a loopback server is reached by; a browser only sends these for a page on this machine. */
const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '[::1]'];

/** Listening on every interface names no host a client would send. */
const WILDCARD_ADDRESSES = new Set(['', '0.0.0.0', '::', '[::]']);

export interface HostSettings {
  /** The address the api listens on (SPUR_HOST). */
  listenHost: string;
  /** SPUR_ALLOWED_HOSTS: more names clients use (a proxy's public name). */
  allowedHosts: readonly string[];
  /** API keys are configured. */
  keysSet: boolean;
}

/**
 * Which `Host` header values are served. DNS rebinding points an attacker's name at 127.0.0.1, so a
 * page of theirs reaches this server as same-origin, with their name in `Host`. Without keys only
 * loopback names and the listen address are served. With keys a rebinding page gains nothing (it
 * has neither key nor cookie), so any name is served unless SPUR_ALLOWED_HOSTS lists them.
 * Returns null when every Host is served.
 */
export function allowedHostNames(settings: HostSettings): ReadonlySet<string> | null {
  if (settings.keysSet && settings.allowedHosts.length === 0) return null;
  const names = new Set(LOOPBACK_NAMES);
  const listen = settings.listenHost.toLowerCase();
  if (!WILDCARD_ADDRESSES.has(listen))
    names.add(listen.includes(':') && !listen.startsWith('[') ? `[${listen}]` : listen);
  for (const name of settings.allowedHosts) names.add(name.toLowerCase());
  return names;
}

/** The host name of a `Host` header value (`name`, `name:port`, `[v6]`, `[v6]:port`), lower-case; null when malformed. */
export function hostNameOf(header: string): string | null {
  const match = /^(\[[0-9A-Fa-f:.]+\]|[^:[\]\s]+)(?::(\d{1,5}))?$/.exec(header);
  return match?.[1] ? match[1].toLowerCase() : null;
}

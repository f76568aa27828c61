import { lookup } from 'node:dns/promises';
import type { LookupFunction } from 'node:net';
import { isIP } from 'node:net';
import { refusedAddress } from './address-policy';
import { OutboundRefusedError } from './errors';

export { OutboundRefusedError };

export type Resolver = (host: string) => Promise<Array<{ address: string; family: number }>>;

export const systemResolver: Resolver = (host) => lookup(host, { all: true, verbatim: true });

/** A url's host without IPv6 brackets. */
export function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}

/** Refuses what is not http(s), and an IP-literal host the policy refuses (no lookup is made for those). */
export function checkUrl(url: URL, allowPrivate: boolean): void {
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new OutboundRefusedError(`only http and https urls may be requested, not ${url.protocol}`);
  const host = hostOf(url);
  const why = isIP(host) ? refusedAddress(host, allowPrivate) : null;
  if (why !== null) throw new OutboundRefusedError(why);
}

/**
 * Resolves `host` and checks every address it resolves to (refused if any is not allowed), so a
 * name that also points at an internal address is refused whichever one a client would pick. A
 * resolution failure is thrown as it is (a DNS outage is worth retrying, a refused address is not).
 */
export async function checkedAddresses(
  host: string,
  allowPrivate: boolean,
  resolve: Resolver = systemResolver,
): Promise<Array<{ address: string; family: 4 | 6 }>> {
  const addresses = isIP(host) ? [{ address: host, family: isIP(host) }] : await resolve(host);
  if (addresses.length === 0) throw new OutboundRefusedError(`${host} does not resolve to an address`);
  for (const { address } of addresses) {
    const why = refusedAddress(address, allowPrivate);
    if (why !== null) throw new OutboundRefusedError(isIP(host) ? why : `${host} resolves to ${address}: ${why}`);
  }
  return addresses.map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }));
}

/**
 * The `lookup` of every outbound connection: the addresses it answers are the ones checked, and
 * the socket connects to one of them, so a name cannot be rebound between check and connection.
 */
export function checkingLookup(allowPrivate: boolean, resolve: Resolver = systemResolver): LookupFunction {
  return (hostname, options, callback) => {
    checkedAddresses(hostname, allowPrivate, resolve).then(
      (addresses) => {
        const wanted =
          options.family === 4 || options.family === 6
            ? addresses.filter((a) => a.family === options.family)
            : addresses;
        const usable = wanted.length > 0 ? wanted : addresses;
        if (options.all) callback(null, usable);
        else callback(null, (usable[0] as { address: string }).address, (usable[0] as { family: number }).family);
      },
      (error: Error) => callback(error as NodeJS.ErrnoException, '', 0),
    );
  };
}

/** `host:port` with the scheme's default port spelled out, as SPUR_OUTBOUND_ALLOW_HOSTS lists them. */
export function hostPort(url: URL): string {
  return `${url.hostname.toLowerCase()}:${url.port || (url.protocol === 'https:' ? '443' : '80')}`;
}

/** The `host:port` pairs of SPUR_OUTBOUND_ALLOW_HOSTS, as `hostPort` spells them. */
export function trustedHosts(allowHosts: readonly string[]): ReadonlySet<string> {
  return new Set(allowHosts.map((h) => h.toLowerCase()));
}

/**
 * Checks a url as a request to it would be checked, without sending anything (validation at
 * submission). A host the operator trusts (`trusted`) passes whatever its address, as the outbound
 * client connects to it; only its scheme and special-purpose IP literals are refused.
 */
export async function checkedUrl(
  rawUrl: string,
  allowPrivate: boolean,
  resolve: Resolver = systemResolver,
  trusted: ReadonlySet<string> = new Set(),
): Promise<URL> {
  const url = new URL(rawUrl);
  const isTrusted = trusted.has(hostPort(url));
  checkUrl(url, allowPrivate || isTrusted);
  if (!isTrusted) await checkedAddresses(hostOf(url), allowPrivate, resolve);
  return url;
}

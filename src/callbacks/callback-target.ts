import { lookup } from 'node:dns/promises';
import type { LookupFunction } from 'node:net';
import { isIP } from 'node:net';
import { refusedAddress } from './address-policy';

/** The url cannot be called back: a client's mistake (422 at submission, no retry at delivery). */
export class CallbackRefusedError extends Error {}

/** Where a delivery connects: the url, and the one address of its host that was checked. */
export interface CallbackTarget {
  url: URL;
  address: string;
  family: 4 | 6;
}

export type Resolver = (host: string) => Promise<Array<{ address: string; family: number }>>;

const systemResolver: Resolver = (host) => lookup(host, { all: true, verbatim: true });

/**
 * Resolves the url's host and checks every address it resolves to (refused if any is not
 * allowed). The caller connects to the address returned, never to a second resolution, so the
 * name cannot be rebound to another address between the check and the connection. A resolution
 * failure is thrown as it is (a DNS outage is worth retrying, a refused address is not).
 */
export async function checkedTarget(rawUrl: string, allowPrivate: boolean, resolve: Resolver = systemResolver): Promise<CallbackTarget> {
  const url = new URL(rawUrl);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new CallbackRefusedError('only http and https urls can be called back');
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const addresses = isIP(host) ? [{ address: host, family: isIP(host) }] : await resolve(host);
  if (addresses.length === 0) throw new CallbackRefusedError(`${host} does not resolve to an address`);
  for (const { address } of addresses) {
    const why = refusedAddress(address, allowPrivate);
    if (why !== null) throw new CallbackRefusedError(isIP(host) ? why : `${host} resolves to ${why}`);
  }
  const first = addresses[0] as { address: string; family: number };
  return { url, address: first.address, family: first.family === 6 ? 6 : 4 };
}

/** A `lookup` for the http client that answers only the checked address, whatever it is asked. */
export function pinnedLookup(target: Pick<CallbackTarget, 'address' | 'family'>): LookupFunction {
  return (_hostname, options, callback) => {
    if (options.all) callback(null, [{ address: target.address, family: target.family }]);
    else callback(null, target.address, target.family);
  };
}

import ipaddr from 'ipaddr.js';

/**
 * Which addresses a server-side request may connect to. Only globally routable unicast addresses
 * by default; with `allowPrivate` (an installation's own network, `npm run dev`) also loopback,
 * private, link-local (cloud metadata), unique-local and carrier-grade NAT ones. Special-purpose
 * ranges (unspecified, multicast, broadcast, documentation, benchmarking, 6to4/Teredo/NAT64 tunnels
 * that can carry any IPv4 address…) are never allowed. Pure: tested without sending a packet.
 */
const PRIVATE_USE = new Set(['loopback', 'private', 'linkLocal', 'uniqueLocal', 'carrierGradeNat']);

/** The operator setting that lets requests reach private networks. */
export const ALLOW_PRIVATE_SETTING = 'SPUR_OUTBOUND_ALLOW_PRIVATE';

/** null when `address` (an IP literal) may be connected to; otherwise why not. */
export function refusedAddress(address: string, allowPrivate: boolean): string | null {
  if (!ipaddr.isValid(address)) return `'${address}' is not an IP address`;
  const ip = ipaddr.parse(address);
  // `::ffff:a.b.c.d` is the IPv4 address a.b.c.d on the wire.
  if (ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress()) {
    const inner = refusedAddress((ip as ipaddr.IPv6).toIPv4Address().toString(), allowPrivate);
    return allowPrivate || inner !== null ? inner : `${address} is an IPv4-mapped IPv6 address`;
  }
  const range = ip.range();
  if (range === 'unicast') return null;
  if (allowPrivate && PRIVATE_USE.has(range)) return null;
  return PRIVATE_USE.has(range)
    ? `${address} is a ${range} address; requests to private networks need ${ALLOW_PRIVATE_SETTING}=true`
    : `${address} is a special-purpose (${range}) address`;
}

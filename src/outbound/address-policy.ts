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
  const embedded = ip.kind() === 'ipv6' ? embeddedIpv4(ip as ipaddr.IPv6) : null;
  if (embedded) {
    const inner = refusedAddress(embedded.ipv4, allowPrivate);
    return allowPrivate || inner !== null ? inner : `${address} is an ${embedded.kind} IPv6 address`;
  }
  const range = ip.range();
  if (range === 'unicast') return null;
  if (allowPrivate && PRIVATE_USE.has(range)) return null;
  return PRIVATE_USE.has(range)
    ? `${address} is a ${range} address; requests to private networks need ${ALLOW_PRIVATE_SETTING}=true`
    : `${address} is a special-purpose (${range}) address`;
}

/**
 * The IPv4 address an IPv6 one carries in its last 32 bits, judged as that address: `::ffff:a.b.c.d`
 * (IPv4-mapped, a.b.c.d on the wire) and the deprecated `::a.b.c.d` (IPv4-compatible), which the
 * URL parser writes `[::7f00:1]` and ipaddr.js calls plain unicast. `::` and `::1` are IPv6's own.
 */
function embeddedIpv4(ip: ipaddr.IPv6): { ipv4: string; kind: string } | null {
  if (ip.isIPv4MappedAddress()) return { ipv4: ip.toIPv4Address().toString(), kind: 'IPv4-mapped' };
  const [a, b, c, d, e, f, g, h] = ip.parts as [number, number, number, number, number, number, number, number];
  if (a !== 0 || b !== 0 || c !== 0 || d !== 0 || e !== 0 || f !== 0 || (g === 0 && h <= 1)) return null;
  return { ipv4: [g >> 8, g & 0xff, h >> 8, h & 0xff].join('.'), kind: 'IPv4-compatible' };
}

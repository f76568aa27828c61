// The opt-in sandbox network and the outbound policy refuse the same IPv4 destinations, as pure
// functions: nothing is dialled. (test/e2e/python-sandbox-setup.test.ts sees the routes in a sandbox.)
import assert from 'node:assert/strict';
import ipaddr from 'ipaddr.js';
import { PROHIBITED_RANGES } from '../../src/nodes/code-execution/sandbox-network';
import { refusedAddress } from '../../src/outbound/address-policy';

const ranges = PROHIBITED_RANGES.map((r) => ipaddr.IPv4.parseCIDR(r));
const prohibited = (address: number) => ranges.some((r) => ipv4(address).match(r));
const ipv4 = (n: number) => new ipaddr.IPv4([n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255]);
/** Loopback inside the sandbox is the sandbox's own `lo`; the host's is closed by slirp4netns. */
const isLoopback = (n: number) => n >>> 24 === 127;

/**
 * The addresses looked at: the first of every /16, the first of every /24 in the blocks where the
 * special-purpose registry's /24 ranges lie (192/8, 198/8, 203/8), and the edges of each prohibited
 * range and their neighbours. Every range of either list is whole /16s or /24s of those blocks.
 */
function samples(): number[] {
  const out = new Set<number>();
  const add = (n: number) => n >= 0 && n <= 0xffffffff && out.add(n);
  for (let block = 0; block < 1 << 16; block++) add((block << 16) >>> 0);
  for (const first of [192, 198, 203])
    for (let block = 0; block < 1 << 16; block++) add(((first << 24) | (block << 8)) >>> 0);
  for (const [net, bits] of ranges) {
    const [a, b, c, d] = net.octets as [number, number, number, number];
    const start = ((a << 24) | (b << 16) | (c << 8) | d) >>> 0;
    const end = start + 2 ** (32 - bits) - 1;
    for (const n of [start - 1, start, end, end + 1]) add(n);
  }
  return [...out];
}

describe('sandbox network: prohibited ranges', function () {
  // A quarter million addresses: seconds alone, more beside a busy suite's other files.
  this.timeout(120_000);
  it('prohibits every IPv4 address the outbound policy refuses (loopback aside), and none it allows', () => {
    const missing: string[] = [];
    const extra: string[] = [];
    for (const n of samples()) {
      if (isLoopback(n)) continue;
      const refused = refusedAddress(ipv4(n).toString(), false) !== null;
      if (refused && !prohibited(n)) missing.push(ipv4(n).toString());
      if (!refused && prohibited(n)) extra.push(ipv4(n).toString());
    }
    assert.deepEqual(missing, [], 'refused by the policy, reachable from the sandbox');
    assert.deepEqual(extra, [], 'prohibited in the sandbox, allowed by the policy');
  });
});

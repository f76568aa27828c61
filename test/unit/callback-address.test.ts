// The callback address check as pure functions: no test sends a packet anywhere, least of all to
// the addresses it proves refused (they are classified, never connected to).
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { refusedAddress } from '../../src/outbound/address-policy';
import {
  OutboundRefusedError,
  type Resolver,
  checkedAddresses,
  checkedUrl,
  checkingLookup,
} from '../../src/outbound/checked-target';
import { callbackSignature, callbackVerdict } from '../../src/callbacks/callback-post';
import { loadConfig } from '../../src/config/load-config';

const PUBLIC = ['8.8.8.8', '1.1.1.1', '93.184.216.34', '2606:4700:4700::1111', '2a00:1450:4001:82b::200e'];
const PRIVATE_USE = [
  '127.0.0.1',
  '127.255.255.254', // loopback
  '10.0.0.1',
  '172.16.0.1',
  '172.31.255.255',
  '192.168.1.1', // RFC 1918
  '169.254.169.254',
  '169.254.0.1', // link-local (cloud metadata)
  '100.64.0.1',
  '100.127.255.254', // carrier-grade NAT
  '::1',
  '0:0:0:0:0:0:0:1', // IPv6 loopback, both spellings
  'fe80::1',
  'fe80::abcd:1%eth0', // IPv6 link-local, with a zone
  'fc00::1',
  'fd12:3456:789a::1', // IPv6 unique-local
];
const SPECIAL = [
  '0.0.0.0',
  '0.1.2.3',
  '::', // unspecified
  '224.0.0.1',
  '239.255.255.250',
  'ff02::1', // multicast
  '255.255.255.255', // broadcast
  '192.0.2.1',
  '198.51.100.7',
  '203.0.113.9',
  '240.0.0.1',
  '2001:db8::1', // documentation and reserved
  '198.18.0.1', // benchmarking
  '64:ff9b::7f00:1', // NAT64 of 127.0.0.1
  '2002:7f00:1::1', // 6to4 of 127.0.0.1
  '2001:0:4136:e378::1', // Teredo
];
const MAPPED_PRIVATE = [
  '::ffff:127.0.0.1',
  '::ffff:7f00:1',
  '::ffff:10.0.0.1',
  '::ffff:169.254.169.254',
  '::ffff:192.168.0.1',
];

describe('callback address policy', () => {
  it('allows globally routable unicast addresses', () => {
    for (const a of PUBLIC) assert.equal(refusedAddress(a, false), null, a);
  });

  it('refuses loopback, private, link-local, CGNAT and unique-local addresses by default, and names the setting', () => {
    for (const a of PRIVATE_USE) {
      const why = refusedAddress(a, false);
      assert.ok(why, `${a} should be refused`);
      assert.match(why, /SPUR_OUTBOUND_ALLOW_PRIVATE/);
    }
  });

  it('allows those with SPUR_OUTBOUND_ALLOW_PRIVATE', () => {
    for (const a of PRIVATE_USE) assert.equal(refusedAddress(a, true), null, a);
  });

  it('refuses special-purpose addresses whatever the setting', () => {
    for (const a of SPECIAL) {
      assert.ok(refusedAddress(a, false), `${a} should be refused`);
      assert.ok(refusedAddress(a, true), `${a} should be refused even with private addresses allowed`);
    }
  });

  it('sees through IPv4-mapped IPv6: refused by default, judged as the IPv4 address with the setting', () => {
    for (const a of MAPPED_PRIVATE) {
      assert.ok(refusedAddress(a, false), a);
      assert.equal(refusedAddress(a, true), null, a);
    }
    assert.ok(refusedAddress('::ffff:8.8.8.8', false), 'mapped public addresses are refused by default too');
    assert.ok(refusedAddress('::ffff:0.0.0.0', true), 'a mapped special-purpose address stays refused');
  });

  it('sees through IPv4-compatible IPv6 (::a.b.c.d, written ::7f00:1 by the URL parser) the same way', () => {
    for (const [a, range] of [
      ['::7f00:1', 'loopback'],
      ['::127.0.0.1', 'loopback'],
      ['::a00:1', 'private'],
      ['::c0a8:101', 'private'],
      ['::a9fe:a9fe', 'linkLocal'],
      ['::6440:1', 'carrierGradeNat'],
    ]) {
      assert.match(
        refusedAddress(a, false) ?? '',
        new RegExp(`is a ${range} address; .*SPUR_OUTBOUND_ALLOW_PRIVATE`),
        a,
      );
      assert.equal(refusedAddress(a, true), null, a);
    }
    assert.match(
      refusedAddress('::808:808', false) ?? '',
      /IPv4-compatible/,
      'compatible public addresses are refused by default',
    );
    assert.ok(refusedAddress('::e000:1', true), 'a compatible multicast address stays refused');
    assert.match(refusedAddress('::1', false) ?? '', /::1 is a loopback address/, '::1 is IPv6 loopback, not 0.0.0.1');
  });

  it('refuses what is not an IP address', () => {
    for (const a of ['localhost', '', '1.2.3.4.5', 'gggg::1']) assert.ok(refusedAddress(a, true), a);
  });
});

describe('outbound address checks (resolution by a given resolver, no DNS)', () => {
  const resolver =
    (answers: Record<string, string[]>): Resolver =>
    async (host) =>
      (answers[host] ?? []).map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));

  it('checks every address a name resolves to', async () => {
    const addresses = await checkedAddresses(
      'hooks.example.test',
      false,
      resolver({ 'hooks.example.test': ['93.184.216.34', '2606:4700::1'] }),
    );
    assert.deepEqual(addresses, [
      { address: '93.184.216.34', family: 4 },
      { address: '2606:4700::1', family: 6 },
    ]);
  });

  it('refuses a name with any private address among its answers (rebinding-style answers)', async () => {
    const resolve = resolver({
      'evil.example.test': ['93.184.216.34', '127.0.0.1'],
      'meta.example.test': ['169.254.169.254'],
    });
    await assert.rejects(
      checkedUrl('http://evil.example.test/', false, resolve),
      (err: Error) =>
        err instanceof OutboundRefusedError &&
        /evil\.example\.test resolves to 127\.0\.0\.1: .*SPUR_OUTBOUND_ALLOW_PRIVATE=true/.test(err.message),
    );
    await assert.rejects(checkedUrl('http://meta.example.test/', false, resolve), OutboundRefusedError);
  });

  it('checks IP literals without resolving them, IPv6 in brackets too', async () => {
    const never: Resolver = async () => assert.fail('an IP literal is not resolved');
    await assert.rejects(checkedUrl('http://[::1]:8080/', false, never), OutboundRefusedError);
    await assert.rejects(checkedUrl('http://[::ffff:127.0.0.1]/', false, never), OutboundRefusedError);
    await assert.rejects(
      checkedUrl('http://2130706433/', false, never),
      OutboundRefusedError,
      'the URL parser canonicalises a decimal host to 127.0.0.1',
    );
    await assert.rejects(checkedUrl('http://0x7f.1/', false, never), OutboundRefusedError, 'and a hexadecimal one');
    for (const literal of [
      'http://2130706433/', // decimal
      'http://017700000001/', // octal, one part
      'http://0177.0.0.1/', // octal
      'http://0x7f.0.0.1/', // hexadecimal
      'http://0x7f000001/',
      'http://127.1/', // short form
      'http://[::127.0.0.1]/', // IPv4-compatible IPv6
      'http://[::ffff:7f00:1]/', // IPv4-mapped IPv6
    ])
      await assert.rejects(
        checkedUrl(literal, false, never),
        (err: Error) => err instanceof OutboundRefusedError && /127\.0\.0\.1 is a loopback address/.test(err.message),
        literal,
      );
    assert.equal((await checkedUrl('http://[2606:4700::1]/', false, never)).hostname, '[2606:4700::1]');
  });

  it('refuses other schemes and names that do not resolve', async () => {
    await assert.rejects(checkedUrl('ftp://93.184.216.34/', true), OutboundRefusedError);
    await assert.rejects(checkedUrl('file:///etc/passwd', true), OutboundRefusedError);
    await assert.rejects(checkedUrl('http://nowhere.example.test/', true, resolver({})), OutboundRefusedError);
  });

  it('the connection lookup answers only checked addresses, in both callback forms, and refuses the rest', async () => {
    const lookup = checkingLookup(
      false,
      resolver({ 'ok.example.test': ['93.184.216.34'], 'evil.example.test': ['10.0.0.5'] }),
    );
    const one = await new Promise<[unknown, unknown, unknown]>((resolve) =>
      lookup('ok.example.test', {}, (err, address, family) => resolve([err, address, family])),
    );
    assert.deepEqual(one, [null, '93.184.216.34', 4]);
    const all = await new Promise<[unknown, unknown]>((resolve) =>
      lookup('ok.example.test', { all: true }, (err, addresses) => resolve([err, addresses])),
    );
    assert.deepEqual(all, [null, [{ address: '93.184.216.34', family: 4 }]]);
    const refused = await new Promise<unknown>((resolve) => lookup('evil.example.test', {}, (err) => resolve(err)));
    assert.ok(refused instanceof OutboundRefusedError && /10\.0\.0\.5/.test(refused.message));
  });
});

describe('callback signature and verdicts', () => {
  it('signs the raw body with HMAC-SHA256 of the secret, as sha256=<hex>', () => {
    const body = Buffer.from('{"event":"run.completed","run":{"id":"R1"}}');
    assert.equal(
      callbackSignature('s3cret-key', body),
      `sha256=${createHmac('sha256', 's3cret-key').update(body).digest('hex')}`,
    );
  });

  it('2xx delivers; 429 and 5xx retry; redirects and other 4xx stop', () => {
    for (const s of [200, 201, 204]) assert.equal(callbackVerdict(s), 'delivered');
    for (const s of [429, 500, 502, 503, 504]) assert.equal(callbackVerdict(s), 'retry');
    for (const s of [301, 302, 307, 400, 401, 403, 404, 410, 422]) assert.equal(callbackVerdict(s), 'refused');
  });

  it('private addresses are off unless configured, and the retry window defaults to 24 h', () => {
    const config = loadConfig({});
    assert.equal(config.outbound.allowPrivate, false);
    assert.equal(config.callbacks.retry.giveUpAfterMs, 24 * 3_600_000);
    assert.equal(loadConfig({ SPUR_OUTBOUND_ALLOW_PRIVATE: 'true' }).outbound.allowPrivate, true);
  });
});

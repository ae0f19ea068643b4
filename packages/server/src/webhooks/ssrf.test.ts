// The SSRF guard's address classification. Checking an address sends no traffic; the only
// name resolved is `localhost` (from /etc/hosts).

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BlockedAddressError, blockedReason, normalizeAddress, resolveDeliveryAddress } from './ssrf.ts';

/** Every refused range: first address, one inside, last address, and the reason given. */
const BLOCKED: [string, string[], RegExp][] = [
  ['0.0.0.0/8', ['0.0.0.0', '0.1.2.3', '0.255.255.255'], /unspecified/],
  ['10.0.0.0/8', ['10.0.0.0', '10.0.0.1', '10.255.255.255'], /private/],
  ['100.64.0.0/10', ['100.64.0.0', '100.100.100.200', '100.127.255.255'], /carrier-grade NAT/],
  ['127.0.0.0/8', ['127.0.0.0', '127.0.0.1', '127.255.255.255'], /loopback/],
  ['169.254.0.0/16', ['169.254.0.0', '169.254.169.254', '169.254.255.255'], /link-local/],
  ['172.16.0.0/12', ['172.16.0.0', '172.20.1.1', '172.31.255.255'], /private/],
  ['192.0.0.0/24', ['192.0.0.0', '192.0.0.170', '192.0.0.255'], /IETF/],
  ['192.168.0.0/16', ['192.168.0.0', '192.168.1.1', '192.168.255.255'], /private/],
  ['198.18.0.0/15', ['198.18.0.0', '198.19.0.1', '198.19.255.255'], /benchmarking/],
  ['224.0.0.0/4', ['224.0.0.0', '239.255.255.250', '239.255.255.255'], /multicast/],
  ['240.0.0.0/4', ['240.0.0.0', '250.1.2.3', '255.255.255.255'], /reserved and broadcast/],
  ['::/128', ['::', '0:0:0:0:0:0:0:0'], /unspecified/],
  ['::1/128', ['::1', '0:0:0:0:0:0:0:1', '[::1]'], /loopback/],
  ['fc00::/7', ['fc00::', 'fd12:3456:789a::1', 'fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff'], /unique local/],
  ['fe80::/10', ['fe80::', 'fe80::1', 'FE80::1', 'febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff'], /link-local/],
  ['ff00::/8', ['ff00::', 'ff02::1', 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff'], /multicast/],
  ['64:ff9b::/96', ['64:ff9b::', '64:ff9b::a00:1', '64:ff9b::7f00:1'], /NAT64/],
  ['2001:db8::/32', ['2001:db8::', '2001:db8::1', '2001:db8:ffff:ffff:ffff:ffff:ffff:ffff'], /documentation/],
];

/** IPv4 addresses in IPv6 clothing are judged as the IPv4 address they carry. */
const MAPPED: [string, RegExp][] = [
  ['::ffff:127.0.0.1', /loopback/],
  ['::ffff:7f00:1', /loopback/],
  ['::FFFF:7F00:0001', /loopback/],
  ['0:0:0:0:0:ffff:7f00:1', /loopback/],
  ['0000:0000:0000:0000:0000:ffff:127.0.0.1', /loopback/],
  ['[::ffff:127.0.0.1]', /loopback/],
  ['::ffff:10.0.0.1', /private/],
  ['::ffff:a00:1', /private/],
  ['::ffff:169.254.169.254', /link-local/],
  ['::ffff:a9fe:a9fe', /link-local/],
  ['::ffff:0.0.0.0', /unspecified/],
  ['::ffff:192.168.0.1', /private/],
];

/** Public neighbours of the refused ranges, and well-known public addresses. */
const PUBLIC = [
  '93.184.215.14',
  '1.1.1.1',
  '8.8.8.8',
  '1.0.0.0',
  '9.255.255.255',
  '11.0.0.0',
  '100.63.255.255',
  '100.128.0.0',
  '126.255.255.255',
  '128.0.0.0',
  '169.253.255.255',
  '169.255.0.0',
  '172.15.255.255',
  '172.32.0.0',
  '192.0.1.0',
  '192.167.255.255',
  '192.169.0.0',
  '198.17.255.255',
  '198.20.0.0',
  '223.255.255.255',
  '2606:4700::1111',
  '2001:4860:4860::8888',
  '2a00:1450:4001::1',
  '::2',
  'fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff',
  'fec0::1',
  'fe00::1',
  '2001:db7:ffff::1',
  '2001:db9::1',
  '64:ff9b:1::1',
  '::ffff:93.184.215.14',
  '::ffff:5db8:d70e',
];

describe('blockedReason', () => {
  for (const [range, addresses, why] of BLOCKED)
    it(`refuses ${range} (${why.source})`, () => {
      for (const a of addresses) {
        const reason = blockedReason(a);
        assert.ok(reason, `${a} should be refused`);
        assert.match(reason, why, a);
      }
    });

  it('refuses IPv4-mapped IPv6 addresses for the IPv4 address they carry', () => {
    for (const [a, why] of MAPPED) {
      const reason = blockedReason(a);
      assert.ok(reason, `${a} should be refused`);
      assert.match(reason, why, a);
    }
  });

  it('allows public addresses, including the neighbours of every refused range', () => {
    for (const a of PUBLIC) assert.equal(blockedReason(a), undefined, a);
  });
});

describe('normalizeAddress', () => {
  it('unwraps IPv4-mapped IPv6 in dotted and hex forms', () => {
    assert.deepEqual(normalizeAddress('::ffff:7f00:1'), { address: '127.0.0.1', family: 'ipv4' });
    assert.deepEqual(normalizeAddress('::ffff:10.0.0.1'), { address: '10.0.0.1', family: 'ipv4' });
    assert.deepEqual(normalizeAddress('[::ffff:a9fe:a9fe]'), { address: '169.254.169.254', family: 'ipv4' });
    assert.deepEqual(normalizeAddress('2606:4700::1111'), { address: '2606:4700::1111', family: 'ipv6' });
    assert.deepEqual(normalizeAddress('8.8.8.8'), { address: '8.8.8.8', family: 'ipv4' });
  });
});

describe('resolveDeliveryAddress', () => {
  it('refuses localhost when private targets are not allowed, naming the address', async () => {
    await assert.rejects(resolveDeliveryAddress('localhost', false), (e: unknown) => {
      assert.ok(e instanceof BlockedAddressError);
      assert.equal(e.code, 'ERR_GUARD_SSRF');
      assert.match(e.message, /localhost \(127\.0\.0\.1\): loopback/);
      return true;
    });
  });

  it('refuses loopback, private and metadata IP literals without resolving anything', async () => {
    for (const [host, re] of [
      ['127.0.0.1', /127\.0\.0\.1.*loopback/],
      ['[::1]', /::1.*loopback/],
      ['10.0.0.1', /10\.0\.0\.1.*private/],
      ['169.254.169.254', /169\.254\.169\.254.*link-local/],
      ['[::ffff:7f00:1]', /loopback/],
      ['0.0.0.0', /unspecified/],
    ] as const)
      await assert.rejects(resolveDeliveryAddress(host, false), re, host);
  });

  it('returns a public IP literal as it is (no lookup, no traffic)', async () => {
    assert.deepEqual(await resolveDeliveryAddress('93.184.215.14', false), { address: '93.184.215.14', family: 4 });
    assert.deepEqual(await resolveDeliveryAddress('[2606:4700::1111]', false), {
      address: '2606:4700::1111',
      family: 6,
    });
  });

  it('lets private targets through when allowed (development and tests)', async () => {
    assert.deepEqual(await resolveDeliveryAddress('127.0.0.1', true), { address: '127.0.0.1', family: 4 });
    const local = await resolveDeliveryAddress('localhost', true);
    assert.match(blockedReason(local.address) ?? '', /loopback/);
  });
});

// The SSRF guard's address classification, written from DESIGN §5 and the IANA IPv4 and IPv6
// Special-Purpose Address Registries (plus the cloud metadata addresses), not from ssrf.ts's
// own table. One row per range: samples inside it, and the nearest addresses just outside it,
// each with what it must give (refused for a reason, or public). Checking an address sends no
// traffic; the only name resolved is `localhost` (from /etc/hosts).

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ALLOW_PRIVATE_HINT, BlockedAddressError, blockedReason, resolveDeliveryAddress } from './ssrf.ts';

/** A reason the address is refused for, or 'public'. */
type Expect = RegExp | 'public';
interface Row {
  range: string;
  inside: [string, Expect][];
  outside: [string, Expect][];
}

const PUBLIC = 'public' as const;
const MAX = 'ffff:ffff:ffff:ffff:ffff:ffff';
/** A range refused as a whole, every sample inside for the same reason. */
const refused = (range: string, why: RegExp, inside: string[], outside: [string, Expect][]): Row => ({
  range,
  inside: inside.map((a) => [a, why]),
  outside,
});

const IPV4: Row[] = [
  refused('0.0.0.0/8 this network', /unspecified/, ['0.0.0.0', '0.1.2.3', '0.255.255.255'], [['1.0.0.0', PUBLIC]]),
  refused(
    '10.0.0.0/8 private',
    /private/,
    ['10.0.0.0', '10.1.2.3', '10.255.255.255'],
    [
      ['9.255.255.255', PUBLIC],
      ['11.0.0.0', PUBLIC],
    ],
  ),
  refused(
    '100.64.0.0/10 shared address space (CGNAT)',
    /carrier-grade NAT/,
    ['100.64.0.0', '100.100.1.1', '100.127.255.255'],
    [
      ['100.63.255.255', PUBLIC],
      ['100.128.0.0', PUBLIC],
    ],
  ),
  refused(
    '127.0.0.0/8 loopback',
    /loopback/,
    ['127.0.0.0', '127.0.0.1', '127.255.255.255'],
    [
      ['126.255.255.255', PUBLIC],
      ['128.0.0.0', PUBLIC],
    ],
  ),
  refused(
    '169.254.0.0/16 link-local',
    /link-local/,
    ['169.254.0.0', '169.254.1.1', '169.254.255.255'],
    [
      ['169.253.255.255', PUBLIC],
      ['169.255.0.0', PUBLIC],
    ],
  ),
  refused(
    '172.16.0.0/12 private',
    /private/,
    ['172.16.0.0', '172.20.1.1', '172.31.255.255'],
    [
      ['172.15.255.255', PUBLIC],
      ['172.32.0.0', PUBLIC],
    ],
  ),
  refused(
    '192.0.0.0/24 IETF protocol assignments',
    /IETF protocol/,
    ['192.0.0.0', '192.0.0.8', '192.0.0.170', '192.0.0.255'],
    [
      ['191.255.255.255', PUBLIC],
      ['192.0.1.0', PUBLIC],
    ],
  ),
  refused(
    '192.0.2.0/24 documentation (TEST-NET-1)',
    /documentation/,
    ['192.0.2.0', '192.0.2.1', '192.0.2.255'],
    [
      ['192.0.1.255', PUBLIC],
      ['192.0.3.0', PUBLIC],
    ],
  ),
  refused(
    '192.88.99.0/24 deprecated 6to4 relay anycast',
    /6to4 relay/,
    ['192.88.99.0', '192.88.99.1', '192.88.99.255'],
    [
      ['192.88.98.255', PUBLIC],
      ['192.88.100.0', PUBLIC],
    ],
  ),
  refused(
    '192.168.0.0/16 private',
    /private/,
    ['192.168.0.0', '192.168.1.1', '192.168.255.255'],
    [
      ['192.167.255.255', PUBLIC],
      ['192.169.0.0', PUBLIC],
    ],
  ),
  refused(
    '198.18.0.0/15 benchmarking',
    /benchmarking/,
    ['198.18.0.0', '198.19.0.1', '198.19.255.255'],
    [
      ['198.17.255.255', PUBLIC],
      ['198.20.0.0', PUBLIC],
    ],
  ),
  refused(
    '198.51.100.0/24 documentation (TEST-NET-2)',
    /documentation/,
    ['198.51.100.0', '198.51.100.1', '198.51.100.255'],
    [
      ['198.51.99.255', PUBLIC],
      ['198.51.101.0', PUBLIC],
    ],
  ),
  refused(
    '203.0.113.0/24 documentation (TEST-NET-3)',
    /documentation/,
    ['203.0.113.0', '203.0.113.1', '203.0.113.255'],
    [
      ['203.0.112.255', PUBLIC],
      ['203.0.114.0', PUBLIC],
    ],
  ),
  refused(
    '224.0.0.0/4 multicast',
    /multicast/,
    ['224.0.0.0', '239.255.255.250', '239.255.255.255'],
    [
      ['223.255.255.255', PUBLIC],
      ['240.0.0.0', /reserved/],
    ],
  ),
  refused(
    '240.0.0.0/4 reserved',
    /reserved/,
    ['240.0.0.0', '250.1.2.3', '255.255.255.254'],
    [
      ['239.255.255.255', /multicast/],
      ['255.255.255.255', /broadcast/],
    ],
  ),
  refused('255.255.255.255/32 limited broadcast', /broadcast/, ['255.255.255.255'], [['255.255.255.254', /reserved/]]),
];

const METADATA: Row[] = [
  refused(
    '169.254.169.254 (AWS, GCP, Azure, OpenStack instance metadata)',
    /metadata/,
    ['169.254.169.254'],
    [
      ['169.254.169.253', /link-local/],
      ['169.254.169.255', /link-local/],
    ],
  ),
  refused(
    'fd00:ec2::254 (AWS instance metadata over IPv6)',
    /metadata/,
    ['fd00:ec2::254', '[fd00:ec2::254]'],
    [['fd00:ec2::253', /unique local/]],
  ),
  refused(
    '100.100.100.200 (Alibaba Cloud metadata)',
    /metadata/,
    ['100.100.100.200'],
    [['100.100.100.199', /carrier-grade NAT/]],
  ),
  refused('192.0.0.192 (Oracle Cloud metadata)', /metadata/, ['192.0.0.192'], [['192.0.0.191', /IETF protocol/]]),
  refused(
    '168.63.129.16 (Azure WireServer)',
    /metadata/,
    ['168.63.129.16'],
    [
      ['168.63.129.15', PUBLIC],
      ['168.63.129.17', PUBLIC],
    ],
  ),
];

const IPV6: Row[] = [
  refused('::/128 unspecified', /unspecified/, ['::', '0:0:0:0:0:0:0:0', '[::]'], [['::1', /loopback/]]),
  refused('::1/128 loopback', /loopback/, ['::1', '0:0:0:0:0:0:0:1', '[::1]'], [['::2', /unspecified/]]),
  {
    range: '::ffff:0:0/96 IPv4-mapped: judged by the IPv4 address it carries',
    inside: [
      ['::ffff:127.0.0.1', /loopback/],
      ['::ffff:7f00:1', /loopback/],
      ['::FFFF:7F00:0001', /loopback/],
      ['0:0:0:0:0:ffff:7f00:1', /loopback/],
      ['0000:0000:0000:0000:0000:ffff:127.0.0.1', /loopback/],
      ['[::ffff:127.0.0.1]', /loopback/],
      ['::ffff:a00:1', /private/],
      ['::ffff:192.168.0.1', /private/],
      ['::ffff:a9fe:a9fe', /metadata/],
      ['::ffff:0.0.0.0', /unspecified/],
      ['::ffff:c000:201', /documentation/],
      ['::ffff:93.184.215.14', PUBLIC],
      ['::ffff:808:808', PUBLIC],
    ],
    outside: [
      ['::fffe:7f00:1', /reserved/],
      ['::1:ffff:7f00:1', /reserved/],
    ],
  },
  {
    range: '::ffff:0:0:0/96 SIIT IPv4-translated: judged by the IPv4 address it carries',
    inside: [
      ['::ffff:0:7f00:1', /loopback/],
      ['::ffff:0:127.0.0.1', /loopback/],
      ['::ffff:0:a00:1', /private/],
      ['::ffff:0:c633:6401', /documentation/],
      ['::ffff:0:808:808', PUBLIC],
    ],
    outside: [['::ffff:1:7f00:1', /reserved/]],
  },
  {
    range: '::/96 IPv4-compatible: judged by the IPv4 address it carries',
    inside: [
      ['::127.0.0.1', /loopback/],
      ['::7f00:1', /loopback/],
      ['[::7f00:1]', /loopback/],
      ['::a00:1', /private/],
      ['::a9fe:a9fe', /metadata/],
      ['::2', /unspecified/],
      ['::cb00:7101', /documentation/],
      ['::808:808', PUBLIC],
    ],
    outside: [['::1:0:0', /reserved/]],
  },
  {
    range: '64:ff9b::/96 NAT64: judged by the IPv4 address it carries',
    inside: [
      ['64:ff9b::7f00:1', /loopback/],
      ['64:ff9b::10.0.0.1', /private/],
      ['64:ff9b::a9fe:a9fe', /metadata/],
      ['64:ff9b::c000:201', /documentation/],
      ['64:ff9b::808:808', PUBLIC],
    ],
    outside: [
      ['64:ff9b::1:0:0', /reserved/],
      ['64:ff9a:ffff:ffff:ffff:ffff:ffff:ffff', /reserved/],
    ],
  },
  refused(
    '64:ff9b:1::/48 local-use NAT64',
    /local-use NAT64/,
    ['64:ff9b:1::808:808', '64:ff9b:1:ffff:ffff:ffff:ffff:ffff'],
    [['64:ff9b:2::', /reserved/]],
  ),
  {
    range: '2002::/16 6to4: judged by the IPv4 address it carries',
    inside: [
      ['2002:7f00:1::', /loopback/],
      ['2002:a00:1::1', /private/],
      ['2002:c000:204::1', /documentation/],
      ['2002:a9fe:a9fe::', /metadata/],
      ['2002:808:808::1', PUBLIC],
    ],
    outside: [
      [`2001:${MAX}:ffff`, PUBLIC],
      ['2003::1', PUBLIC],
    ],
  },
  refused(
    '2001::/32 Teredo',
    /Teredo/,
    ['2001::', '2001:0:4136:e378:8000:63bf:3fff:fdd2', `2001:0:${MAX}`],
    [['2001:1::', /IETF protocol/]],
  ),
  refused('2001:2::/48 benchmarking', /benchmarking/, ['2001:2::1', '2001:2:0:ffff::1'], [['2001:2:1::', /IETF/]]),
  refused(
    '2001::/23 IETF protocol assignments',
    /IETF protocol/,
    ['2001:1::1', '2001:3::1', `2001:1ff:${MAX}`],
    [
      [`2000:${MAX}:ffff`, PUBLIC],
      ['2001:200::1', PUBLIC],
    ],
  ),
  refused(
    '2001:db8::/32 documentation',
    /documentation/,
    ['2001:db8::', '2001:db8::1', `2001:db8:${MAX}`],
    [
      [`2001:db7:${MAX}`, PUBLIC],
      ['2001:db9::', PUBLIC],
    ],
  ),
  refused(
    '3fff::/20 documentation',
    /documentation/,
    ['3fff::', '3fff:fff:ffff::1'],
    [
      [`3ffe:ffff:${MAX}`, PUBLIC],
      ['3fff:1000::', PUBLIC],
    ],
  ),
  refused(
    '100::/64 discard-only',
    /discard-only/,
    ['100::', '100::ffff:ffff:ffff:ffff'],
    [['100:0:0:1::', /reserved/]],
  ),
  refused('5f00::/16 SRv6 SIDs', /SRv6/, ['5f00::1'], [['5f01::', /reserved/]]),
  refused(
    'fc00::/7 unique local',
    /unique local/,
    ['fc00::', 'fd12:3456:789a::1', `fdff:ffff:${MAX}`],
    [
      [`fbff:ffff:${MAX}`, /reserved/],
      ['fe00::', /reserved/],
    ],
  ),
  refused(
    'fe80::/10 link-local',
    /link-local/,
    ['fe80::', 'fe80::1', 'FE80::1', 'fe80::1%eth0', `febf:ffff:${MAX}`],
    [
      [`fe7f:ffff:${MAX}`, /reserved/],
      ['fec0::', /site-local/],
    ],
  ),
  refused(
    'fec0::/10 site-local (deprecated)',
    /site-local/,
    ['fec0::1', `feff:ffff:${MAX}`],
    [['ff00::', /multicast/]],
  ),
  refused(
    'ff00::/8 multicast',
    /multicast/,
    ['ff00::', 'ff02::1', `ffff:ffff:${MAX}`],
    [[`feff:ffff:${MAX}`, /site-local/]],
  ),
  refused(
    'outside 2000::/3 (global unicast): not assigned for use on the Internet',
    /reserved/,
    ['1::1', `1fff:ffff:${MAX}`, '4000::', 'e000::1'],
    [
      ['2000::', PUBLIC],
      [`3fff:ffff:${MAX}`, PUBLIC],
    ],
  ),
];

/** Well-known public addresses. */
const WELL_KNOWN_PUBLIC = ['93.184.215.14', '1.1.1.1', '8.8.8.8', '2606:4700::1111', '2001:4860:4860::8888'];

function check(address: string, expect: Expect): void {
  const reason = blockedReason(address);
  if (expect === PUBLIC) assert.equal(reason, undefined, `${address} is public, refused as: ${reason}`);
  else {
    assert.ok(reason, `${address} should be refused (${expect.source})`);
    assert.match(reason, expect, address);
  }
}

describe('blockedReason', () => {
  for (const [family, rows] of [
    ['IPv4', IPV4],
    ['metadata', METADATA],
    ['IPv6', IPV6],
  ] as const)
    for (const row of rows)
      it(`${family} ${row.range}`, () => {
        for (const [address, expect] of row.inside) check(address, expect);
        for (const [address, expect] of row.outside) check(address, expect);
      });

  it('allows well-known public addresses', () => {
    for (const a of WELL_KNOWN_PUBLIC) assert.equal(blockedReason(a), undefined, a);
  });

  it('names the range, and for an embedded IPv4 address the form that carried it', () => {
    assert.match(blockedReason('127.0.0.1') ?? '', /127\.0\.0\.0\/8/);
    assert.match(blockedReason('::ffff:7f00:1') ?? '', /127\.0\.0\.1.*IPv4-mapped/);
    assert.match(blockedReason('2002:7f00:1::') ?? '', /127\.0\.0\.1.*6to4/);
    assert.match(blockedReason('64:ff9b::a00:1') ?? '', /10\.0\.0\.1.*NAT64/);
  });
});

describe('resolveDeliveryAddress', () => {
  it('refuses localhost when private targets are not allowed, naming the address and the development flag', async () => {
    await assert.rejects(resolveDeliveryAddress('localhost', false), (e: unknown) => {
      assert.ok(e instanceof BlockedAddressError);
      assert.equal(e.code, 'ERR_GUARD_SSRF');
      assert.match(e.message, /localhost \(127\.0\.0\.1\): loopback/);
      assert.ok(e.message.includes(ALLOW_PRIVATE_HINT), e.message);
      assert.match(ALLOW_PRIVATE_HINT, /--webhook-allow-private/);
      return true;
    });
  });

  it('refuses non-public IP literals without resolving anything, the ones a review found included', async () => {
    for (const [host, re] of [
      ['127.0.0.1', /127\.0\.0\.1.*loopback/],
      ['[::1]', /::1.*loopback/],
      ['10.0.0.1', /10\.0\.0\.1.*private/],
      ['169.254.169.254', /169\.254\.169\.254.*metadata/],
      ['[::ffff:7f00:1]', /loopback/],
      ['0.0.0.0', /unspecified/],
      ['192.0.2.1', /documentation/],
      ['198.51.100.1', /documentation/],
      ['203.0.113.1', /documentation/],
      ['[::7f00:1]', /loopback/],
      ['[::ffff:0:7f00:1]', /loopback/],
      ['[2002:7f00:1::]', /loopback/],
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

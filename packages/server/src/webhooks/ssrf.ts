// SSRF guard for webhook deliveries (DESIGN §5). The check runs inside the connector, on the
// address actually connected to, after our own DNS resolution: a hostname that resolves to a
// non-public address is refused, and there is no window for DNS rebinding between check and
// use. The routes run the same check on IP-literal URLs when an endpoint is written.
//
// The ranges are the IANA IPv4 and IPv6 Special-Purpose Address Registries' entries that are
// not globally reachable, the cloud metadata addresses, and for IPv6 everything outside
// 2000::/3 (the only block assigned as global unicast). IPv6 forms that carry an IPv4 address
// are judged by that address. A pure function over the 4 or 16 address bytes: node:net's
// BlockList answers only "in the list or not" and unwraps IPv4-mapped addresses alone, not
// the IPv4-compatible, SIIT, NAT64 and 6to4 forms.

import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';

export const ALLOW_PRIVATE_HINT =
  'webhooks reach only public addresses; guard-server --webhook-allow-private lifts this, for development and tests only';

interface Range {
  cidr: string;
  bytes: Uint8Array;
  prefix: number;
  why: string;
}

/** IPv6 ranges whose address carries an IPv4 address, and where in its 16 bytes it sits. */
interface Carrier extends Range {
  at: number;
}

function range(cidr: string, why: string): Range {
  const [net, prefix] = cidr.split('/');
  const bytes = parseAddress(net);
  if (!bytes) throw new Error(`bad range ${cidr}`);
  return { cidr, bytes, prefix: Number(prefix), why };
}

/** Most specific first: the first match names the reason. */
const bySpecificity = (a: Range, b: Range) => b.prefix - a.prefix;

const IPV4_RANGES: readonly Range[] = [
  range('169.254.169.254/32', 'cloud metadata (AWS, GCP, Azure, OpenStack)'),
  range('100.100.100.200/32', 'cloud metadata (Alibaba Cloud)'),
  range('192.0.0.192/32', 'cloud metadata (Oracle Cloud)'),
  range('168.63.129.16/32', 'cloud metadata (Azure WireServer)'),
  range('255.255.255.255/32', 'broadcast'),
  range('0.0.0.0/8', 'unspecified ("this network")'),
  range('10.0.0.0/8', 'private'),
  range('100.64.0.0/10', 'carrier-grade NAT'),
  range('127.0.0.0/8', 'loopback'),
  range('169.254.0.0/16', 'link-local'),
  range('172.16.0.0/12', 'private'),
  range('192.0.0.0/24', 'IETF protocol assignment'),
  range('192.0.2.0/24', 'documentation'),
  range('192.88.99.0/24', 'deprecated 6to4 relay anycast'),
  range('192.168.0.0/16', 'private'),
  range('198.18.0.0/15', 'benchmarking'),
  range('198.51.100.0/24', 'documentation'),
  range('203.0.113.0/24', 'documentation'),
  range('224.0.0.0/4', 'multicast'),
  range('240.0.0.0/4', 'reserved'),
].sort(bySpecificity);

const IPV6_RANGES: readonly Range[] = [
  range('::/128', 'unspecified'),
  range('::1/128', 'loopback'),
  range('fd00:ec2::254/128', 'cloud metadata (AWS)'),
  range('64:ff9b:1::/48', 'local-use NAT64'),
  range('100::/64', 'discard-only'),
  range('2001::/32', 'Teredo'),
  range('2001:2::/48', 'benchmarking'),
  range('2001::/23', 'IETF protocol assignment'),
  range('2001:db8::/32', 'documentation'),
  range('3fff::/20', 'documentation'),
  range('5f00::/16', 'SRv6 SID'),
  range('fc00::/7', 'unique local (private)'),
  range('fe80::/10', 'link-local'),
  range('fec0::/10', 'site-local (deprecated)'),
  range('ff00::/8', 'multicast'),
].sort(bySpecificity);

const carrier = (cidr: string, why: string, at: number): Carrier => ({ ...range(cidr, why), at });
const IPV4_CARRIERS: readonly Carrier[] = [
  carrier('::ffff:0:0/96', 'IPv4-mapped', 12),
  carrier('::ffff:0:0:0/96', 'SIIT IPv4-translated', 12),
  carrier('64:ff9b::/96', 'NAT64', 12),
  carrier('::/96', 'IPv4-compatible', 12),
  carrier('2002::/16', '6to4', 2),
];
const GLOBAL_UNICAST = range('2000::/3', 'global unicast');

function inRange(bytes: Uint8Array, r: Range): boolean {
  if (bytes.length !== r.bytes.length) return false;
  const whole = r.prefix >> 3;
  for (let i = 0; i < whole; i++) if (bytes[i] !== r.bytes[i]) return false;
  const bits = r.prefix & 7;
  if (bits === 0) return true;
  const mask = (0xff << (8 - bits)) & 0xff;
  return (bytes[whole] & mask) === (r.bytes[whole] & mask);
}

/** The 4 or 16 bytes of an IP address (brackets and an IPv6 zone allowed), or undefined. */
export function parseAddress(address: string): Uint8Array | undefined {
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const family = isIP(bare);
  if (family === 4) return Uint8Array.from(bare.split('.').map(Number));
  if (family !== 6) return undefined;
  let text = bare.toLowerCase();
  // A trailing dotted quad (::ffff:1.2.3.4) becomes two groups.
  const quad = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (quad) {
    const [a, b, c, d] = quad.slice(1).map(Number);
    text = `${text.slice(0, quad.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = tail === undefined ? left : [...left, ...Array(8 - left.length - right.length).fill('0'), ...right];
  const bytes = new Uint8Array(16);
  groups.forEach((g, i) => {
    const n = Number.parseInt(g, 16);
    bytes[2 * i] = n >> 8;
    bytes[2 * i + 1] = n & 0xff;
  });
  return bytes;
}

function ipv4Reason(bytes: Uint8Array): string | undefined {
  const r = IPV4_RANGES.find((x) => inRange(bytes, x));
  return r ? `${r.why} address (${r.cidr})` : undefined;
}

/** Why an address is refused, or undefined when it is a public address. */
export function blockedReason(address: string): string | undefined {
  const bytes = parseAddress(address);
  if (!bytes) return 'not an IP address';
  if (bytes.length === 4) return ipv4Reason(bytes);
  const own = IPV6_RANGES.find((x) => inRange(bytes, x));
  if (own) return `${own.why} address (${own.cidr})`;
  const form = IPV4_CARRIERS.find((x) => inRange(bytes, x));
  if (form) {
    const v4 = bytes.subarray(form.at, form.at + 4);
    const why = ipv4Reason(v4);
    return why && `${why}, embedded as ${v4.join('.')} (${form.why}, ${form.cidr})`;
  }
  if (!inRange(bytes, GLOBAL_UNICAST)) return 'reserved address (outside 2000::/3, the global unicast block)';
  return undefined;
}

export class BlockedAddressError extends Error {
  readonly code = 'ERR_GUARD_SSRF';
}

/**
 * Resolves `hostname` and returns the address to connect to: the first one allowed. Every
 * resolved address must be public unless `allowPrivate` (a name that resolves to both a
 * public and a private address is refused: it is either misconfigured or an attack).
 */
export async function resolveDeliveryAddress(
  hostname: string,
  allowPrivate: boolean,
): Promise<{ address: string; family: 4 | 6 }> {
  const host = hostname.replace(/^\[|\]$/g, '');
  const found = isIP(host)
    ? [{ address: host, family: isIP(host) as 4 | 6 }]
    : await lookup(host, { all: true, verbatim: true });
  if (found.length === 0) throw new Error(`${hostname} did not resolve`);
  if (!allowPrivate) {
    for (const a of found) {
      const why = blockedReason(a.address);
      if (why)
        throw new BlockedAddressError(
          `refused to connect to ${hostname}${a.address === host ? '' : ` (${a.address})`}: ${why}; ${ALLOW_PRIVATE_HINT}`,
        );
    }
  }
  return { address: found[0].address, family: found[0].family as 4 | 6 };
}

// SSRF guard for webhook deliveries (DESIGN §5). The check runs inside the connector, on the
// address actually connected to, after our own DNS resolution: a hostname that resolves to a
// private address is refused, and there is no window for DNS rebinding between check and use.

import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

/** Address ranges a webhook may never reach unless private targets are allowed. */
export const BLOCKED_RANGES: ReadonlyArray<[string, number, 'ipv4' | 'ipv6', string]> = [
  ['0.0.0.0', 8, 'ipv4', 'unspecified'],
  ['10.0.0.0', 8, 'ipv4', 'private'],
  ['100.64.0.0', 10, 'ipv4', 'carrier-grade NAT'],
  ['127.0.0.0', 8, 'ipv4', 'loopback'],
  ['169.254.0.0', 16, 'ipv4', 'link-local (cloud metadata)'],
  ['172.16.0.0', 12, 'ipv4', 'private'],
  ['192.0.0.0', 24, 'ipv4', 'IETF protocol assignments'],
  ['192.168.0.0', 16, 'ipv4', 'private'],
  ['198.18.0.0', 15, 'ipv4', 'benchmarking'],
  ['224.0.0.0', 4, 'ipv4', 'multicast'],
  ['240.0.0.0', 4, 'ipv4', 'reserved and broadcast'],
  ['::', 128, 'ipv6', 'unspecified'],
  ['::1', 128, 'ipv6', 'loopback'],
  ['fc00::', 7, 'ipv6', 'unique local (private)'],
  ['fe80::', 10, 'ipv6', 'link-local'],
  ['ff00::', 8, 'ipv6', 'multicast'],
  ['64:ff9b::', 96, 'ipv6', 'NAT64 (maps IPv4)'],
  ['2001:db8::', 32, 'ipv6', 'documentation'],
];

const ranges = BLOCKED_RANGES.map(([net, prefix, family, why]) => {
  const list = new BlockList();
  list.addSubnet(net, prefix, family);
  return { list, family, why };
});

/** `::ffff:10.0.0.1` and `::ffff:a00:1` are IPv4 addresses in disguise: check them as IPv4. */
export function normalizeAddress(address: string): { address: string; family: 'ipv4' | 'ipv6' } {
  const bare = address.replace(/^\[|\]$/g, '').toLowerCase();
  const mapped = /^(?:0{0,4}:){0,4}:?(?:0{0,4}:)?ffff:(.+)$/.exec(bare);
  if (mapped) {
    const tail = mapped[1];
    if (isIP(tail) === 4) return { address: tail, family: 'ipv4' };
    const hex = /^([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(tail);
    if (hex) {
      const hi = Number.parseInt(hex[1], 16);
      const lo = Number.parseInt(hex[2], 16);
      return { address: `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`, family: 'ipv4' };
    }
  }
  return { address: bare, family: isIP(bare) === 4 ? 'ipv4' : 'ipv6' };
}

/** Why an address is refused, or undefined when it is a public address. */
export function blockedReason(address: string): string | undefined {
  const n = normalizeAddress(address);
  for (const r of ranges) if (r.family === n.family && r.list.check(n.address, n.family)) return r.why;
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
      if (why) throw new BlockedAddressError(`refused to connect to ${hostname} (${a.address}): ${why} address`);
    }
  }
  return { address: found[0].address, family: found[0].family as 4 | 6 };
}

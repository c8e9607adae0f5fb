import { BlockList, isIP } from 'node:net';

/** Why an address is not one a webhook may be sent to: it reaches the platform's own host or network. */
export type PrivateAddressKind = 'unspecified' | 'loopback' | 'private' | 'link-local' | 'unique-local';

/**
 * The ranges by kind, IPv4 and IPv6. node:net's BlockList does the matching (IPv4-mapped IPv6 addresses, such as
 * `::ffff:127.0.0.1`, match the IPv4 rules), so nothing here parses an address by hand.
 */
const RANGES: Readonly<Record<PrivateAddressKind, readonly (readonly [string, number, 'ipv4' | 'ipv6'])[]>> = {
  unspecified: [
    ['0.0.0.0', 8, 'ipv4'],
    ['::', 128, 'ipv6'],
  ],
  loopback: [
    ['127.0.0.0', 8, 'ipv4'],
    ['::1', 128, 'ipv6'],
  ],
  // RFC 1918, and the carrier-grade NAT range (RFC 6598), which is just as internal to whoever runs it.
  private: [
    ['10.0.0.0', 8, 'ipv4'],
    ['172.16.0.0', 12, 'ipv4'],
    ['192.168.0.0', 16, 'ipv4'],
    ['100.64.0.0', 10, 'ipv4'],
  ],
  // Where cloud metadata services answer (169.254.169.254).
  'link-local': [
    ['169.254.0.0', 16, 'ipv4'],
    ['fe80::', 10, 'ipv6'],
  ],
  'unique-local': [['fc00::', 7, 'ipv6']],
};

const LISTS = Object.entries(RANGES).map(([kind, ranges]) => {
  const list = new BlockList();
  for (const [network, prefix, family] of ranges) list.addSubnet(network, prefix, family);
  return [kind as PrivateAddressKind, list] as const;
});

/**
 * What kind of internal address `address` (an IP literal, IPv6 without brackets) is, or undefined for one that may be
 * sent to. Anything that is not an IP address is refused as `unspecified`: callers pass resolved addresses only.
 */
export function privateAddressKind(address: string): PrivateAddressKind | undefined {
  const version = isIP(address);
  if (version === 0) return 'unspecified';
  const family = version === 4 ? 'ipv4' : 'ipv6';
  for (const [kind, list] of LISTS) if (list.check(address, family)) return kind;
  return undefined;
}

/** `[::1]` → `::1`: a URL's hostname as the address it names, when it is an IP literal. */
export function unbracketed(hostname: string): string {
  return hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
}

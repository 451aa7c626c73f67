// Keys of counters and caches made from client input (failed-password
// budgets, request budgets). Each has a fixed size whatever the client sent,
// so that no client can make its entries cost more than anyone else's, and
// holds nothing the client typed (a login or an email is personal data, and
// counters end up in Redis).
import { createHash } from 'node:crypto';
import { isIPv4, isIPv6 } from 'node:net';

/** SHA-256 of client text, base64url (43 characters). */
export const digestKey = (text: string): string => createHash('sha256').update(text).digest('base64url');

/**
 * The client an address stands for: an IPv4 address as it is; an IPv6
 * address by its /64 (one subscriber's network: a client rotating through
 * its own addresses is one client), an IPv4-mapped one as its IPv4; anything
 * else (a forwarded value that is no address) by its digest.
 */
export function addressKey(address: string): string {
  if (isIPv4(address)) return address;
  if (!isIPv6(address)) return `other:${digestKey(address)}`;
  const groups = ipv6Groups(address);
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return [groups[6]! >> 8, groups[6]! & 0xff, groups[7]! >> 8, groups[7]! & 0xff].join('.');
  }
  return `${groups
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(':')}::/64`;
}

/** The eight 16-bit groups of a valid IPv6 address (zone id dropped, an embedded IPv4 as two groups). */
function ipv6Groups(address: string): number[] {
  let text = address.split('%')[0]!;
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (v4) {
    const [a, b, c, d] = v4.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, v4.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const hex = (part: string | undefined): number[] => (part ? part.split(':').map((h) => parseInt(h, 16)) : []);
  const [head, tail] = text.split('::');
  if (tail === undefined) return hex(head);
  const [first, last] = [hex(head), hex(tail)];
  return [...first, ...Array<number>(8 - first.length - last.length).fill(0), ...last];
}

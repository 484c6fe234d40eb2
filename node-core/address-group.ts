import { isIPv4, isIPv6 } from 'node:net';

/**
 * The unit a client address is counted under by per-client limits (HTTP rate limits and connection
 * caps, peer-to-peer inbound caps): an IPv4 address on its own, but an IPv6 address by its prefix.
 * A single IPv6 subscriber usually gets a whole /64 (often a /56), so keying by the full address
 * would hand one client 2^64 fresh allowances. IPv4-mapped IPv6 (`::ffff:192.0.2.7`, also written
 * `::ffff:c000:207`) is the IPv4 address it carries: a dual-stack socket reports IPv4 peers that way.
 */
export function addressGroup(ip: string, ipv6PrefixBits: number): string {
  if (isIPv4(ip)) return ip;
  if (!isIPv6(ip)) return ip; // not an address (an in-memory peer): its own unit
  const hex = expandIPv6(ip);
  if (hex.startsWith('00000000000000000000ffff')) return ipv4OfHex(hex.slice(24));
  const whole = Math.floor(ipv6PrefixBits / 4);
  const spare = ipv6PrefixBits % 4;
  let prefix = hex.slice(0, whole);
  if (spare > 0) {
    const mask = (0xf << (4 - spare)) & 0xf;
    prefix += (parseInt(hex.charAt(whole), 16) & mask).toString(16);
  }
  return `${prefix}/${ipv6PrefixBits}`;
}

/** The 32 hex digits of an IPv6 address, with `::` expanded (IPv4-suffixed forms and zone ids too). */
function expandIPv6(ip: string): string {
  let addr = ip.toLowerCase().split('%')[0]!;
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(addr);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    const hex = (x: number, y: number) => ((x << 8) | y).toString(16);
    addr = `${addr.slice(0, dotted.index)}${hex(a, b)}:${hex(c, d)}`;
  }
  const [head, tail] = addr.split('::') as [string, string | undefined];
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const fill = tail === undefined ? [] : Array<string>(8 - left.length - right.length).fill('0');
  return [...left, ...fill, ...right].map((g) => g.padStart(4, '0')).join('');
}

function ipv4OfHex(hex8: string): string {
  const n = parseInt(hex8, 16);
  return [n >>> 24, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff].join('.');
}

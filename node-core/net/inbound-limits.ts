import { isIPv4, isIPv6 } from 'node:net';
import { NetError } from './errors.ts';

/**
 * Caps on inbound connections (reference-behavior.md 5.1 and 9.4 N-09, connection flooding and
 * eclipse attempts): at most `perIp` connections from one IPv4 address (or one IPv6 /56, the
 * smallest block a single site usually gets), and at most `total` inbound connections overall.
 * Outbound connections, which this node chose, are not counted. A connection is counted from the
 * moment its socket is accepted until it closes, so a flood of half-open handshakes counts too.
 */
export interface InboundLimitOptions {
  /** Inbound connections per IPv4 address or IPv6 /56 (default 8). */
  perIp?: number;
  /** Inbound connections in all (default 64). */
  total?: number;
}

export const DEFAULT_MAX_INBOUND_PER_IP = 8;
export const DEFAULT_MAX_INBOUND = 64;

export class InboundLimiter {
  readonly perIp: number;
  readonly total: number;
  private readonly bySource = new Map<string, number>();
  private open = 0;
  /** Inbound connections refused because a cap was reached. */
  refused = 0;

  constructor(opts: InboundLimitOptions = {}) {
    this.perIp = opts.perIp ?? DEFAULT_MAX_INBOUND_PER_IP;
    this.total = opts.total ?? DEFAULT_MAX_INBOUND;
    if (!(this.perIp >= 1 && this.total >= 1))
      throw new NetError('ERR_BAD_OPTION', 'inbound connection caps must be at least 1');
  }

  /**
   * Admits an inbound connection from `ip`: a release function to call once when it closes, or
   * undefined when a cap is reached (the connection is to be refused). An address that is not an IP
   * (a relayed or in-memory connection) counts towards the total only.
   */
  admit(ip: string | undefined): (() => void) | undefined {
    const source = ip === undefined ? undefined : sourceOf(ip);
    const fromSource = source === undefined ? 0 : (this.bySource.get(source) ?? 0);
    if (this.open >= this.total || fromSource >= this.perIp) {
      this.refused += 1;
      return undefined;
    }
    this.open += 1;
    if (source !== undefined) this.bySource.set(source, fromSource + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.open -= 1;
      if (source === undefined) return;
      const n = (this.bySource.get(source) ?? 1) - 1;
      if (n <= 0) this.bySource.delete(source);
      else this.bySource.set(source, n);
    };
  }

  /** Inbound connections open now. */
  get count(): number {
    return this.open;
  }
}

/** The unit an IP is counted under: the IPv4 address itself, or the /56 prefix of an IPv6 address. */
export function sourceOf(ip: string): string {
  if (isIPv4(ip)) return ip;
  if (!isIPv6(ip)) return ip;
  const v4 = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (v4) return v4[1]!;
  return `${expandIPv6(ip).slice(0, 14)}/56`;
}

/** The 32 hex digits of an IPv6 address, with `::` expanded (IPv4-suffixed forms included). */
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

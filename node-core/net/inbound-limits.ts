import { addressGroup } from '../address-group.ts';
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
  /** The IPv6 prefix counted as one address (default 56; the HTTP API counts by /64). */
  ipv6PrefixBits?: number;
}

export const DEFAULT_MAX_INBOUND_PER_IP = 8;
export const DEFAULT_MAX_INBOUND = 64;
const DEFAULT_IPV6_PREFIX_BITS = 56;

export class InboundLimiter {
  readonly perIp: number;
  readonly total: number;
  private readonly ipv6PrefixBits: number;
  private readonly bySource = new Map<string, number>();
  private open = 0;
  /** Inbound connections refused because a cap was reached. */
  refused = 0;

  constructor(opts: InboundLimitOptions = {}) {
    this.perIp = opts.perIp ?? DEFAULT_MAX_INBOUND_PER_IP;
    this.total = opts.total ?? DEFAULT_MAX_INBOUND;
    this.ipv6PrefixBits = opts.ipv6PrefixBits ?? DEFAULT_IPV6_PREFIX_BITS;
    if (!(this.perIp >= 1 && this.total >= 1))
      throw new NetError('ERR_BAD_OPTION', 'inbound connection caps must be at least 1');
  }

  /**
   * Admits an inbound connection from `ip`: a release function to call once when it closes, or
   * undefined when a cap is reached (the connection is to be refused). An address that is not an IP
   * (a relayed or in-memory connection) counts towards the total only.
   */
  admit(ip: string | undefined): (() => void) | undefined {
    const source = ip === undefined ? undefined : addressGroup(ip, this.ipv6PrefixBits);
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

/** The unit an IP is counted under here: the IPv4 address itself, or the /56 prefix of an IPv6 address. */
export function sourceOf(ip: string): string {
  return addressGroup(ip, DEFAULT_IPV6_PREFIX_BITS);
}

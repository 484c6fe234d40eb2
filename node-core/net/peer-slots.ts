import { NetError } from './errors.ts';

/**
 * A bound on the requests this node has open to one peer at once. A peer resets any request stream
 * over the number it takes at once on a connection (libp2p's per-protocol inbound limit), so asking
 * more at once fails the extra requests however slowly they are paced. Past the bound, a request
 * waits here, first come first served, until one of the peer's open requests ends.
 */
export class PeerSlots {
  readonly limit: number;
  /** Per peer: requests open, and the ones waiting for a slot in order. */
  private readonly peers = new Map<string, { open: number; waiting: (() => void)[] }>();

  constructor(limit: number) {
    if (!Number.isInteger(limit) || limit < 1)
      throw new NetError('ERR_BAD_OPTION', 'a peer needs at least one request slot');
    this.limit = limit;
  }

  /** Peers with requests open or waiting now. */
  get size(): number {
    return this.peers.size;
  }

  /** Requests open to `peer` now. */
  open(peer: string): number {
    return this.peers.get(peer)?.open ?? 0;
  }

  /**
   * Waits for a slot to `peer` and takes it; the function returned gives it back (once; later calls
   * do nothing), handing it to the longest waiting request.
   */
  async take(peer: string): Promise<() => void> {
    let entry = this.peers.get(peer);
    if (entry === undefined) {
      entry = { open: 0, waiting: [] };
      this.peers.set(peer, entry);
    }
    if (entry.open < this.limit) entry.open += 1;
    // The slot passes straight from the request that ends to this one: `open` stays as it is.
    else await new Promise<void>((resolve) => entry.waiting.push(resolve));
    let given = false;
    return () => {
      if (given) return;
      given = true;
      const next = entry.waiting.shift();
      if (next) return next();
      entry.open -= 1;
      if (entry.open === 0) this.peers.delete(peer);
    };
  }
}

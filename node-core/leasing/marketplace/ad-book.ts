import type { MarketplaceAdvertisement } from '../../protocol/marketplace.ts';

/**
 * Providers' advertisements as this node heard them: the latest one per provider, each forgotten
 * AD_TTL_NS after it was signed. The reference keeps ads forever, so a provider that went away stays
 * listed until its peers restart (reference-behavior.md 1.5); here a provider re-advertises every
 * AD_INTERVAL_MS and an ad not renewed three times over is dropped.
 */

/** How often a provider publishes its advertisement. */
export const AD_INTERVAL_MS = 5 * 60_000;
/** An ad older than this (by its signed timestamp) is no longer listed: three missed renewals. */
export const AD_TTL_NS = 15n * 60n * 1_000_000_000n;
/** Most providers remembered; a flood of fresh keys cannot grow the book past it. */
export const MAX_ADS = 10_000;

export type AdVerdict = 'stored' | 'stale';

export class AdBook {
  private readonly ads = new Map<string, MarketplaceAdvertisement>();
  private readonly ttlNs: bigint;
  private readonly max: number;

  constructor(opts: { ttlNs?: bigint; max?: number } = {}) {
    this.ttlNs = opts.ttlNs ?? AD_TTL_NS;
    this.max = opts.max ?? MAX_ADS;
  }

  /**
   * Keeps `ad` when it is newer than the provider's ad held, and not expired at `now`. A replay or
   * an older ad is 'stale' (a duplicate to gossip: ignored, not the relaying peer's fault).
   */
  offer(ad: MarketplaceAdvertisement, now: bigint): AdVerdict {
    if (this.expired(ad, now)) return 'stale';
    const held = this.ads.get(ad.provider);
    if (held !== undefined && held.timestamp >= ad.timestamp) return 'stale';
    if (held === undefined && this.ads.size >= this.max) {
      this.prune(now);
      if (this.ads.size >= this.max) return 'stale';
    }
    this.ads.set(ad.provider, ad);
    return 'stored';
  }

  /** Unexpired ads, by provider address. Expired ones are dropped on the way. */
  live(now: bigint): MarketplaceAdvertisement[] {
    this.prune(now);
    return [...this.ads.values()].sort((a, b) => (a.provider < b.provider ? -1 : 1));
  }

  get(provider: string, now: bigint): MarketplaceAdvertisement | undefined {
    const ad = this.ads.get(provider);
    return ad !== undefined && !this.expired(ad, now) ? ad : undefined;
  }

  get size(): number {
    return this.ads.size;
  }

  prune(now: bigint): void {
    for (const [provider, ad] of this.ads) if (this.expired(ad, now)) this.ads.delete(provider);
  }

  private expired(ad: MarketplaceAdvertisement, now: bigint): boolean {
    return ad.timestamp < now - this.ttlNs;
  }
}

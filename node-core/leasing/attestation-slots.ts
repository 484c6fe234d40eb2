/**
 * The messenger's limit on timekeeper attestations (reference-behavior.md 4.6, LS-10): one per
 * peer per identifier per 30 s. The caller takes a slot only once the request has validated, so
 * requests that are refused anyway (an unknown lease, a malformed identifier) never use one up.
 */
export interface AttestationSlotOptions {
  /** How long a slot stays taken (default 30 s). */
  windowMs?: number;
  /** Most slots held at once (default 100,000); beyond that, new requests are refused. */
  maxSlots?: number;
  /** Clock in milliseconds (default Date.now); injectable for tests. */
  now?: () => number;
}

export const ATTESTATION_WINDOW_MS = 30_000;
const DEFAULT_MAX_SLOTS = 100_000;

export class AttestationSlots {
  private readonly windowMs: number;
  private readonly maxSlots: number;
  private readonly now: () => number;
  /** `peer identifier` -> when its slot frees up (ms). */
  private readonly taken = new Map<string, number>();

  constructor(opts: AttestationSlotOptions = {}) {
    this.windowMs = opts.windowMs ?? ATTESTATION_WINDOW_MS;
    this.maxSlots = opts.maxSlots ?? DEFAULT_MAX_SLOTS;
    this.now = opts.now ?? Date.now;
  }

  get size(): number {
    return this.taken.size;
  }

  /** Takes the slot of `peer` for `id`; false when it is taken (or no slot is left). */
  take(peer: string, id: string): boolean {
    const now = this.now();
    const key = `${peer} ${id}`;
    const until = this.taken.get(key);
    if (until !== undefined && until > now) return false;
    if (until === undefined && this.taken.size >= this.maxSlots) {
      this.sweep(now);
      // Refusing the newcomer rather than freeing a live slot: a flood of identifiers must not
      // reopen the slots of the ones already attested.
      if (this.taken.size >= this.maxSlots) return false;
    }
    this.taken.set(key, now + this.windowMs);
    return true;
  }

  /** Frees every slot whose window has passed; returns how many. */
  sweep(now: number = this.now()): number {
    let n = 0;
    for (const [key, until] of this.taken)
      if (until <= now) {
        this.taken.delete(key);
        n++;
      }
    return n;
  }
}

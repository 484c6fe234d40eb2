/**
 * A clock for a node's rate limiter (its `rateLimit.now`) that runs with real time until a test holds
 * it. While held, no bucket refills however slow the machine is, so a test can count a burst and the
 * refusal after it exactly; `advance` lets time pass on demand, as a client's wait would.
 */
export class LimiterClock {
  private heldAt: number | undefined;
  private offset = 0;

  readonly now = (): number => (this.heldAt ?? Date.now()) + this.offset;

  hold(): void {
    this.heldAt ??= Date.now();
  }

  advance(ms: number): void {
    this.offset += ms;
  }

  /** Real time again, from where the held clock stood (it never runs backwards). */
  release(): void {
    if (this.heldAt === undefined) return;
    this.offset += this.heldAt - Date.now();
    this.heldAt = undefined;
  }
}

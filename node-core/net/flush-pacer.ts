/**
 * When a gossip batcher sends what it gathered (issue #18). While the stream is light (the last
 * send carried fewer than `busyItems` items) a request is served at the end of the current turn of
 * the event loop, as before: a node publishing now and then sends each block and vote at once.
 * Once a send carried `busyItems` or more, the next comes no sooner than `windowMs` after it and
 * carries everything gathered meanwhile (Nagle's algorithm, with time in place of acknowledgements).
 *
 * Why: a batch costs every node it reaches about the same whatever it carries (its messages in and
 * out, a group commit with its LMDB commit and journal sync, a vote batch and its signature), and in
 * the three-node benchmark a batch per commit of the submitting node carried about 14 blocks. With
 * a 40 ms window the three nodes spent 750-858 µs a block together instead of 998-1,041, and
 * finalized 2.0-2.2 k blocks/s instead of 1.8-1.9 (alternating runs); one block at a time is final
 * on all three as soon as before (p50 7 ms).
 *
 * A heavy stream (a send carried `heavyItems` or more: with the defaults, about 1,600 blocks a second
 * with their votes) waits `heavyWindowMs` instead. The longer window buys throughput with latency:
 * it lowers what every block costs every node, and near a machine's limit (on 2 cores, about that
 * rate) a block's wait in the queues grows anyway. The rate is fixed, so a faster machine pays the
 * latency with cores to spare; `--gossip-window-heavy` equal to the window turns it off. Three nodes
 * on two cores, 16 clients (2026-11-29, two alternating pairs of three-round runs): 100 ms against
 * 40, gossip 0.51x and 0.53x of the single node's ingest (every round 0.51-0.55x) against 0.41x and
 * 0.43x (0.37-0.46x); receivers 185-223 µs a block against 228-336; under that load a block was
 * final on all three at p50 101-109 ms instead of 63. One block at a time: p50 9-11 ms either way.
 */
export class FlushPacer {
  private readonly flush: () => number;
  private readonly windowMs: number;
  private readonly busyItems: number;
  private readonly heavyWindowMs: number;
  private readonly heavyItems: number;
  private lastSend = -Infinity;
  private lastItems = 0;
  private pending = false;

  /** `flush` sends what is gathered and returns how many items that was. */
  constructor(flush: () => number, opts: PacerOptions) {
    this.flush = flush;
    this.windowMs = opts.windowMs;
    this.busyItems = opts.busyItems ?? BUSY_ITEMS;
    // Never shorter than the ordinary window: a heavier stream never goes out more often.
    this.heavyWindowMs = Math.max(this.windowMs, opts.heavyWindowMs ?? this.windowMs);
    this.heavyItems = opts.heavyItems ?? HEAVY_ITEMS;
  }

  /** How long after the last send the next may go: 0, the window, or the heavy window. */
  private gap(): number {
    if (this.lastItems >= this.heavyItems) return this.heavyWindowMs;
    return this.lastItems >= this.busyItems ? this.windowMs : 0;
  }

  /** Asks for a send: at this turn's end, or at the end of the window after a busy send. */
  request(): void {
    if (this.pending) return;
    this.pending = true;
    // With no gap (a light stream) or no send yet, this is not positive: the send goes this turn.
    const wait = this.lastSend + this.gap() - performance.now();
    if (wait <= 0) setImmediate(this.run);
    // Not kept alive for it: a node that is stopping has nothing left to gossip to.
    else setTimeout(this.run, wait).unref();
  }

  private readonly run = (): void => {
    this.pending = false;
    const at = performance.now();
    const items = this.flush();
    // A run that found nothing to send is no send: it neither opens a window nor closes one.
    if (items > 0) {
      this.lastSend = at;
      this.lastItems = items;
    }
  };
}

export interface PacerOptions {
  /** The window after a busy send (0: every turn). */
  windowMs: number;
  /** Items that make a send busy (default BUSY_ITEMS). */
  busyItems?: number;
  /** The window after a heavy send (default: `windowMs`, i.e. no heavier tier). */
  heavyWindowMs?: number;
  /** Items that make a send heavy (default HEAVY_ITEMS). */
  heavyItems?: number;
}

/** A request hook that flushes at the end of the current turn (a pacer without a window). */
export function everyTurn(flush: () => number): () => void {
  const pacer = new FlushPacer(flush, { windowMs: 0 });
  return () => pacer.request();
}

/** A send of this many items or more means a steady stream: the window applies to the next. */
const BUSY_ITEMS = 8;

/**
 * A send of this many items or more means a heavy stream: the heavy window applies to the next. In
 * a 40 ms window, 128 items are about 1,600 blocks a second with their votes; in a 100 ms one, the
 * stream stays heavy down to about 640 (between the two, a stream keeps the window it has).
 */
const HEAVY_ITEMS = 128;

/** The node's gossip window (NodeOptions.gossipWindowMs) unless set. */
export const DEFAULT_GOSSIP_WINDOW_MS = 40;

/** The node's window under a heavy stream (NodeOptions.gossipHeavyWindowMs) unless set. */
export const DEFAULT_GOSSIP_HEAVY_WINDOW_MS = 100;

/**
 * The node's two windows from its options: the defaults where unset, except that a window of 0
 * (every turn, asked for explicitly) turns the heavy one off too unless that is set as well.
 */
export function gossipWindows(
  windowMs: number | undefined,
  heavyWindowMs: number | undefined,
): { gossipWindowMs: number; gossipHeavyWindowMs: number } {
  const w = windowMs ?? DEFAULT_GOSSIP_WINDOW_MS;
  return {
    gossipWindowMs: w,
    gossipHeavyWindowMs: heavyWindowMs ?? (w === 0 ? 0 : DEFAULT_GOSSIP_HEAVY_WINDOW_MS),
  };
}

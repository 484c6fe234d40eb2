import { NetError } from './errors.ts';
import type { P2PHost } from './host.ts';

/**
 * Round-trip times to the connected peers, for the Node page's peer table. Each peer is asked a
 * request no node knows (PROBE_TYPE) on the messenger every `everyMs`: every node answers an
 * unknown type at once with an error answer (requests.ts), so the time to that answer is one
 * request's round trip (a new stream and its answer), measured without any new protocol. A peer
 * that does not answer within `timeoutMs` shows no latency until it does.
 */
export const PROBE_TYPE = 'latency_probe';

/** The probe over the host's messenger: the peer's error answer to the unknown type is its answer. */
export function messengerProbe(host: Pick<P2PHost, 'request'>): PeerLatencyDeps['probe'] {
  return async (peer, timeoutMs) => {
    try {
      await host.request(peer, PROBE_TYPE, null, { timeoutMs });
    } catch (e) {
      if (e instanceof NetError && e.code === 'ERR_PEER_ANSWER') return;
      throw e;
    }
  };
}

export interface PeerLatencyDeps {
  /** Ids of the peers to measure (the connected, verified ones). */
  peers(): string[];
  /** One request to `peer`: resolves once it answered, rejects when it did not (messengerProbe). */
  probe(peer: string, timeoutMs: number): Promise<void>;
  /** Clock, ms (tests inject one). */
  now?(): number;
}

export interface PeerLatencyOptions {
  /** How often each peer is measured, ms (default 15 s). */
  everyMs?: number;
  /** A probe slower than this counts as no answer, ms (default 5 s). */
  timeoutMs?: number;
  /** Probes started per tick at most, so a node with many peers spreads them out (default 16). */
  perTick?: number;
  /** Tick interval, ms (default 1 s): new peers are measured within a tick of connecting. */
  tickMs?: number;
}

interface Measure {
  rttMs: number | undefined;
  at: number;
  inFlight: boolean;
}

export class PeerLatency {
  private readonly byPeer = new Map<string, Measure>();
  private timer: NodeJS.Timeout | undefined;
  private readonly everyMs: number;
  private readonly timeoutMs: number;
  private readonly perTick: number;
  private readonly tickMs: number;
  private readonly now: () => number;

  private readonly deps: PeerLatencyDeps;

  constructor(deps: PeerLatencyDeps, opts: PeerLatencyOptions = {}) {
    this.deps = deps;
    this.everyMs = opts.everyMs ?? 15_000;
    this.timeoutMs = opts.timeoutMs ?? 5_000;
    this.perTick = opts.perTick ?? 16;
    this.tickMs = opts.tickMs ?? 1_000;
    this.now = deps.now ?? Date.now;
  }

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.tick(), this.tickMs);
    this.timer.unref();
    this.tick();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** The last round trip to `peer`, ms; undefined when not measured yet or it did not answer. */
  latencyMs(peer: string): number | undefined {
    return this.byPeer.get(peer)?.rttMs;
  }

  /** Starts the probes that are due: peers never measured first, then the oldest measurements. */
  tick(): void {
    const live = new Set(this.deps.peers());
    for (const id of this.byPeer.keys()) if (!live.has(id)) this.byPeer.delete(id);
    const t = this.now();
    const due = [...live]
      .map((id) => ({ id, m: this.byPeer.get(id) }))
      .filter(({ m }) => m === undefined || (!m.inFlight && t - m.at >= this.everyMs))
      .sort((a, b) => (a.m?.at ?? -1) - (b.m?.at ?? -1))
      .slice(0, this.perTick);
    for (const { id } of due) void this.measure(id);
  }

  private async measure(peer: string): Promise<void> {
    const prev = this.byPeer.get(peer);
    const m: Measure = { rttMs: prev?.rttMs, at: this.now(), inFlight: true };
    this.byPeer.set(peer, m);
    const started = performance.now();
    let answered = true;
    try {
      await this.deps.probe(peer, this.timeoutMs);
    } catch {
      answered = false;
    }
    const elapsed = performance.now() - started;
    m.inFlight = false;
    m.at = this.now();
    m.rttMs = answered && elapsed <= this.timeoutMs ? Math.round(elapsed * 10) / 10 : undefined;
  }
}

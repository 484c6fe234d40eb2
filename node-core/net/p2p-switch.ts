import type { Logger } from 'pino';
import type { P2PHost } from './host.ts';

/**
 * Stopping and starting the node's peer-to-peer networking while it runs (`POST /node/p2p`, the
 * Node page's switch). Only the libp2p host goes down: the modules that use it (sync, gossip,
 * election pulls, the chat outbox) stay, find no peer while it is down, and carry on once it is up
 * again, when the host redials the configured peers and peers redial it. A host that listened on
 * port 0 comes back on the port it had, so peers that know its address find it again.
 */
export type P2PState = 'off' | 'running' | 'stopping' | 'stopped' | 'starting';

export type P2PSwitchErrorCode = 'p2p_off' | 'start_failed';

export class P2PSwitchError extends Error {
  readonly code: P2PSwitchErrorCode;
  constructor(code: P2PSwitchErrorCode, message: string, options?: ErrorOptions) {
    super(message, options);
    this.code = code;
    this.name = 'P2PSwitchError';
  }
}

export interface P2PSwitchDeps {
  /** The node's host; undefined when the node was started without peer-to-peer networking. */
  host: Pick<P2PHost, 'start' | 'stop' | 'listenAddrs'> | undefined;
  /**
   * The listen addresses the host was created with (the same array: the host reads it at every
   * start). A `/tcp/0` in it is replaced by the port the host got, before the first stop.
   */
  listen: string[];
  log?: Logger;
}

export class P2PSwitch {
  private state_: P2PState;
  /** The transition under way; a second request waits for it rather than racing it. */
  private busy: Promise<void> | undefined;
  /** When the current state began (Unix ms). */
  private since = Date.now();

  private readonly deps: P2PSwitchDeps;

  constructor(deps: P2PSwitchDeps) {
    this.deps = deps;
    this.state_ = deps.host === undefined ? 'off' : 'running';
  }

  get state(): P2PState {
    return this.state_;
  }

  get stateSince(): number {
    return this.since;
  }

  /** Brings networking to `running` (true) or `stopped` (false); resolves with the state reached. */
  async set(running: boolean): Promise<P2PState> {
    const host = this.deps.host;
    if (host === undefined)
      throw new P2PSwitchError(
        'p2p_off',
        'peer-to-peer networking is off for this node (started with --no-p2p): restart it without that flag',
      );
    while (this.busy) await this.busy;
    if ((this.state_ === 'running') === running) return this.state_;
    const step = running ? this.start(host) : this.stop(host);
    this.busy = step.finally(() => (this.busy = undefined));
    await this.busy;
    return this.state_;
  }

  private async stop(host: NonNullable<P2PSwitchDeps['host']>): Promise<void> {
    this.pinPorts(host.listenAddrs);
    this.enter('stopping');
    try {
      await host.stop();
    } finally {
      // A failed stop leaves libp2p in an unknown state; it is restarted cleanly on the next start.
      this.enter('stopped');
    }
    this.deps.log?.info('peer-to-peer networking stopped by the operator');
  }

  private async start(host: NonNullable<P2PSwitchDeps['host']>): Promise<void> {
    this.enter('starting');
    try {
      await host.start();
    } catch (e) {
      await host.stop().catch(() => {});
      this.enter('stopped');
      const why =
        (e as NodeJS.ErrnoException).code === 'EADDRINUSE' ? 'its port is taken now' : (e as Error).message;
      throw new P2PSwitchError('start_failed', `peer-to-peer networking could not start: ${why}`, {
        cause: e,
      });
    }
    this.enter('running');
    this.deps.log?.info({ listen: host.listenAddrs }, 'peer-to-peer networking started by the operator');
  }

  /** Replaces `/tcp/0` listen addresses by the ports the running host got. */
  private pinPorts(actual: string[]): void {
    const listen = this.deps.listen;
    for (let i = 0; i < listen.length; i++) {
      const m = /^(\/ip[46]\/[^/]+\/tcp\/)0$/.exec(listen[i]!);
      if (!m) continue;
      const bound = actual.find((a) => a.startsWith(m[1]!)) ?? actual.find((a) => /\/tcp\/\d+/.test(a));
      const port = bound && /\/tcp\/(\d+)/.exec(bound)?.[1];
      if (port && port !== '0') listen[i] = `${m[1]}${port}`;
    }
  }

  private enter(s: P2PState): void {
    this.state_ = s;
    this.since = Date.now();
  }
}

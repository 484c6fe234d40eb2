import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Directory } from '../../node-core/net/directory.ts';
import { SelfRegistration } from '../../node-core/net/self-registration.ts';
import { keyPairFromSeed } from '../../node-core/protocol/keys.ts';
import type { Registration } from '../../node-core/protocol/registration.ts';
import { signRegistration } from '../../node-core/protocol/registration.ts';

const NODE_PEER = '12D3KooWLwh6bjD9ZBCV3Zzta5SLhCyqrtMuFL5Yk7Lv9K4Gx6JQ';
const T0 = 1_790_000_000_000_000_000n;
const nodeSeed = new Uint8Array(32).fill(3);
const walletSeed = new Uint8Array(32).fill(4);

/** A node's self-registration with peers that subscribe to the directory when the test says. */
function setup() {
  const directory = new Directory({ now: () => T0 });
  const published: Registration[] = [];
  const subscribed = new Set<string>();
  const self = new SelfRegistration(
    {
      directory,
      publish: (r) => published.push(r),
      seed: nodeSeed,
      pubKey: keyPairFromSeed(nodeSeed).pub_key,
      nodePeer: NODE_PEER,
      now: () => T0,
      subscribes: (peer) => subscribed.has(peer),
    },
    { pollMs: 100, waitMs: 30_000 },
  );
  // A wallet served by this node, registered over HTTP before any peer connected.
  const wallet = keyPairFromSeed(walletSeed).pub_key;
  directory.offer(signRegistration({ account: wallet, node_peer: NODE_PEER, timestamp: T0 }, walletSeed));
  return { self, published, subscribed, wallet };
}

describe('self-registration after a new peer', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('waits for the peer to subscribe to the directory, however long that takes, then publishes once', () => {
    const { self, published, subscribed, wallet } = setup();
    self.start();
    expect(published).toHaveLength(1);
    self.peerConnected('peer-b');
    // A loaded machine: B's subscription arrives 5 s after its connection. Published before that,
    // the registration would reach no one.
    vi.advanceTimersByTime(5_000);
    expect(published).toHaveLength(1);
    expect(self.awaiting).toBe(1);
    subscribed.add('peer-b');
    vi.advanceTimersByTime(100);
    // Its own registration, then the served wallet's, as its owner signed it.
    expect(published.map((r) => r.account)).toEqual([published[0]!.account, published[0]!.account, wallet]);
    expect(published[1]!.timestamp).toBeGreaterThan(published[0]!.timestamp);
    expect(self.awaiting).toBe(0);
    vi.advanceTimersByTime(10_000);
    expect(published).toHaveLength(3);
    self.stop();
  });

  it('shares one publish among peers that subscribe together, and gives up on one that never does', () => {
    const { self, published, subscribed } = setup();
    self.start();
    for (const p of ['b', 'c', 'd']) self.peerConnected(p);
    subscribed.add('b');
    subscribed.add('c');
    vi.advanceTimersByTime(100);
    expect(published).toHaveLength(3); // start, then own + wallet once for both
    expect(self.awaiting).toBe(1);
    vi.advanceTimersByTime(30_000);
    expect(self.awaiting).toBe(0);
    expect(published).toHaveLength(3);
    self.stop();
  });

  it('does nothing for peers before start or after stop', () => {
    const { self, published, subscribed } = setup();
    subscribed.add('b');
    self.peerConnected('b');
    vi.advanceTimersByTime(1_000);
    expect(published).toHaveLength(0);
    self.start();
    self.peerConnected('b');
    self.stop();
    vi.advanceTimersByTime(1_000);
    expect(published).toHaveLength(1);
    expect(self.awaiting).toBe(0);
  });
});

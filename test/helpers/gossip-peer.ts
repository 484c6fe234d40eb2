import { noise } from '@chainsafe/libp2p-noise';
import { yamux } from '@chainsafe/libp2p-yamux';
import { type GossipSub, gossipsub } from '@libp2p/gossipsub';
import { identify } from '@libp2p/identify';
import { tcp } from '@libp2p/tcp';
import { multiaddr } from '@multiformats/multiaddr';
import { createLibp2p, type Libp2p } from 'libp2p';
import { TOPICS } from '../../node-core/net/gossip.ts';
import { encodeHello, NETCHECK_PROTOCOL } from '../../node-core/net/netcheck.ts';
import { type TestNode, waitFor } from './node.ts';

/**
 * A bare libp2p peer with GossipSub that passes `t`'s handshake like a real node, subscribed to every
 * topic once the mesh has formed: what it publishes reaches `t` as any peer's gossip would.
 */
export async function gossipPeer(t: TestNode, peers: number): Promise<Libp2p<{ pubsub: GossipSub }>> {
  const info = await t.client.node();
  const addr = (await t.client.get<{ listen_addrs: string[] }>('/node')).listen_addrs[0]!;
  const peer = await createLibp2p({
    addresses: { listen: ['/ip4/127.0.0.1/tcp/0'] },
    transports: [tcp()],
    connectionEncrypters: [noise()],
    streamMuxers: [yamux()],
    services: {
      identify: identify(),
      pubsub: gossipsub({ allowPublishToZeroTopicPeers: true, globalSignaturePolicy: 'StrictNoSign' }),
    },
  });
  const hello = encodeHello({
    network_id: info.network_id,
    version: '1.0.0',
    features: [],
    genesis_hash: info.genesis_hash,
  });
  try {
    // Answer the node's handshake with the right network, and make ours, as a real peer would.
    await peer.handle(NETCHECK_PROTOCOL, async (stream) => {
      for await (const _ of stream) break;
      stream.send(hello);
      await stream.close();
    });
    await peer.dial(multiaddr(addr));
    const s = await peer.getConnections()[0]!.newStream(NETCHECK_PROTOCOL);
    s.send(hello);
    await s.close();
    for await (const _ of s) break;
    for (const topic of Object.values(TOPICS)) peer.services.pubsub.subscribe(topic);
    await waitFor(
      async () => (await t.client.get<{ peer_count: number }>('/node')).peer_count === peers,
      10_000,
      'gossip peer verified',
    );
    await new Promise((r) => setTimeout(r, 1500)); // let the mesh form
    return peer;
  } catch (e) {
    await peer.stop();
    throw e;
  }
}

/**
 * Loads the peer-to-peer modules (libp2p and its parts, then the node's own network modules) a part
 * at a time, giving the event loop back between parts. The node starts networking after its API
 * listens (node.ts start); loading libp2p in one `import()` held the thread for 250-400 ms, during
 * which the API that already listened could not answer. Loaded this way, no part holds it for more
 * than ~60 ms (measured per part), and requests are served in between. Each part is a dependency of
 * the next ones, so a later part finds most of its graph loaded already.
 */
const PARTS: (() => Promise<unknown>)[] = [
  () => import('@multiformats/multiaddr'),
  () => import('@libp2p/crypto/keys'),
  () => import('@libp2p/peer-id'),
  () => import('@chainsafe/libp2p-yamux'),
  () => import('@libp2p/tcp'),
  () => import('@chainsafe/libp2p-noise'),
  () => import('@libp2p/identify'),
  () => import('@libp2p/gossipsub'),
  () => import('libp2p'),
  () => import('./host.ts'),
  () => import('./sync.ts'),
  () => import('./election-pull.ts'),
  () => import('./self-registration.ts'),
  () => import('./certificate-exchange.ts'),
  () => import('./peer-latency.ts'),
];

/** A turn of the event loop: I/O waiting (requests) is handled before the next part loads. */
const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

export async function preloadNetworkModules(): Promise<void> {
  for (const part of PARTS) {
    await yieldToLoop();
    await part();
  }
}

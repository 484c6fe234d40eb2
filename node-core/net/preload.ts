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

/**
 * A few turns of the event loop, so that I/O waiting is handled before the next part loads. One
 * turn is not enough for a request: a connection is accepted in one turn, its bytes are read in the
 * next, and its answer is written after that; with a part loading between each, a request that came
 * in during the load waited two or three parts (~100 ms). A turn with nothing to do costs microseconds.
 */
const LOOP_TURNS = 3;
export const yieldToLoop = async (): Promise<void> => {
  for (let i = 0; i < LOOP_TURNS; i++) await new Promise<void>((resolve) => setImmediate(resolve));
};

export async function preloadNetworkModules(): Promise<void> {
  for (const part of PARTS) {
    await yieldToLoop();
    await part();
  }
}

import { availableParallelism } from 'node:os';
import { LedgerNode, type NodeOptions, NodeStartError } from '../node-core/node.ts';

/**
 * Starting the node inside the desktop app: on the usual API port 8080 so scripts find it, or on a
 * free port when 8080 is taken (another node, another program): the window follows the node
 * wherever it listens, so the app still starts. The same goes for the peer-to-peer port.
 */
export const PREFERRED_PORT = 8080;

/** Signature-verification threads: at least one (never the main thread), at most four, one core spared. */
export function desktopVerifyThreads(cores: number = availableParallelism()): number {
  return Math.max(1, Math.min(4, cores - 1));
}

/**
 * Which of the node's ports a start failure says is taken, if any. The node reports both as
 * NodeStartError; libp2p's own UnsupportedListenAddressesError (EADDRINUSE inside its message) is
 * recognised too, as the node does not always translate it.
 */
export function portInUse(e: unknown): 'api' | 'p2p' | undefined {
  if (!(e instanceof Error)) return undefined;
  if (e.name === 'UnsupportedListenAddressesError' && /EADDRINUSE/.test(e.message)) return 'p2p';
  if (!(e instanceof NodeStartError) || !/already in use/.test(e.message)) return undefined;
  return /^peer-to-peer port/.test(e.message) ? 'p2p' : 'api';
}

export async function startDesktopNode(
  opts: Omit<NodeOptions, 'apiPort'>,
  preferredPort: number = PREFERRED_PORT,
  create: (o: NodeOptions) => LedgerNode = (o) => new LedgerNode(o),
): Promise<LedgerNode> {
  const attempt: NodeOptions = { ...opts, apiPort: preferredPort };
  for (;;) {
    const node = create(attempt);
    try {
      await node.start();
      return node;
    } catch (e) {
      const taken = portInUse(e);
      if (taken === 'api' && attempt.apiPort !== 0) {
        opts.logger?.warn({ port: attempt.apiPort }, 'API port in use: the node takes a free port instead');
        attempt.apiPort = 0;
      } else if (taken === 'p2p' && attempt.p2pPort !== 0) {
        opts.logger?.warn(
          { port: attempt.p2pPort },
          'peer-to-peer port in use: the node takes a free port instead',
        );
        attempt.p2pPort = 0;
      } else {
        throw e;
      }
    }
  }
}

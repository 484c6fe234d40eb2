/**
 * A fresh node for the generators (gen-client-routes, gen-validators): a temporary data directory,
 * any API port, no peers, no rate limits, a light certificate; stopped and removed after `use`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LedgerNode, type NodeOptions } from '../node-core/node.ts';

export async function withScratchNode<T>(
  name: string,
  opts: Partial<NodeOptions>,
  use: (node: LedgerNode) => Promise<T>,
): Promise<T> {
  const dataDir = mkdtempSync(join(tmpdir(), `${name}-`));
  const node = new LedgerNode({
    dataDir,
    apiPort: 0,
    p2p: false,
    rateLimit: false,
    genesisSet: {
      certificate_iterations: 20_000n,
      certificate_table_entries: 1024n,
      certificate_reads: 1000n,
    },
    ...opts,
  });
  try {
    await node.start();
    return await use(node);
  } finally {
    await node.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

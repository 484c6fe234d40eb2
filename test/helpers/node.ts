import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LedgerClient } from '../../node-core/client/client.ts';
import { Wallet } from '../../node-core/client/wallet.ts';
import type { DevnetKeys } from '../../node-core/genesis/genesis.ts';
import { LedgerNode, type NodeOptions } from '../../node-core/node.ts';
import { hexToBytes } from '../../node-core/protocol/hex.ts';

/**
 * A real node for integration tests: real LMDB in a fresh temp directory, a real HTTP port on
 * loopback, a development network with a tiny proof-of-work difficulty.
 */
export const TEST_DIFFICULTY = 0x0000000000000002n;

/**
 * A certificate benchmark of a few milliseconds for test networks: every test node makes its own
 * certificate at start, and two cores are shared by many nodes. Tests of the default pass their own.
 */
export const TEST_CERTIFICATE_WORKLOAD = {
  certificate_iterations: 20_000n,
  certificate_table_entries: 1024n,
  certificate_reads: 1000n,
} as const;

export interface TestNode {
  node: LedgerNode;
  client: LedgerClient;
  dataDir: string;
  keys: DevnetKeys;
  /** A wallet on the node for a seed (fresh random seed by default). */
  wallet(seed?: Uint8Array): Promise<Wallet>;
  stop(opts?: { keepData?: boolean }): Promise<void>;
}

export function tempDir(prefix = 'ledger-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export async function startTestNode(opts: Partial<NodeOptions> = {}): Promise<TestNode> {
  const dataDir = opts.dataDir ?? tempDir();
  const node = new LedgerNode({
    dataDir,
    apiPort: 0,
    powDifficulty: TEST_DIFFICULTY,
    rateLimit: false,
    verifyThreads: 0,
    // Peer-to-peer networking only where a test asks for it (on loopback, a free port).
    p2p: false,
    ...opts,
    genesisSet: { ...TEST_CERTIFICATE_WORKLOAD, ...opts.genesisSet },
    // A test's VMs go with its node, unless the test keeps them on purpose (a restart test).
    vm: opts.vm && {
      ...opts.vm,
      provider: { ...opts.vm.provider, keepVmsOnStop: opts.vm.provider?.keepVmsOnStop ?? false },
    },
  });
  await node.start();
  const client = new LedgerClient(node.url, { adminToken: node.adminToken });
  let keys: DevnetKeys;
  try {
    keys = JSON.parse(readFileSync(join(dataDir, 'devnet-keys.json'), 'utf8')) as DevnetKeys;
  } catch {
    keys = undefined as unknown as DevnetKeys; // joined a network from --genesis-dir
  }
  return {
    node,
    client,
    dataDir,
    keys,
    wallet: (seed) => Wallet.open(client, seed ?? globalThis.crypto.getRandomValues(new Uint8Array(32))),
    async stop({ keepData = false } = {}) {
      await node.stop();
      if (!keepData && !opts.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export function seedOf(hex: string): Uint8Array {
  return hexToBytes(hex);
}

/** Polls until `fn` returns a truthy value or the time runs out. */
export async function waitFor<T>(fn: () => Promise<T> | T, ms = 5000, what = 'condition'): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

import { rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { LedgerClient } from '../../node-core/client/client.ts';
import { Wallet } from '../../node-core/client/wallet.ts';
import { PEER_KEY_FILE, peerIdFromKeyFile } from '../../node-core/net/peer-id-text.ts';
import { LedgerNode, type NodeOptions } from '../../node-core/node.ts';
import { XE } from '../helpers/ledger-kit.ts';
import { TEST_CERTIFICATE_WORKLOAD, TEST_DIFFICULTY, tempDir, waitFor } from '../helpers/node.ts';

/**
 * Start-up order (node.ts start): the API listens first and answers while peer-to-peer networking
 * loads and starts; the node names the peer id it keeps from the first answer; blocks submitted
 * meanwhile are taken and kept; a network that cannot start still fails the start. The verify pool
 * starts its worker only with the first signature to check.
 */

/** A node whose networking waits for `release()` once the API listens: the window tests look into. */
class HeldNode extends LedgerNode {
  release!: () => void;
  private readonly held = new Promise<void>((resolve) => (this.release = resolve));
  protected override async loadNetwork(): Promise<void> {
    await this.held;
    await super.loadNetwork();
  }
}

const options = (dataDir: string, extra: Partial<NodeOptions> = {}): NodeOptions => ({
  dataDir,
  apiPort: 0,
  powDifficulty: TEST_DIFFICULTY,
  rateLimit: false,
  verifyThreads: 1,
  p2p: true,
  p2pPort: 0,
  p2pBind: '127.0.0.1',
  ownCertificate: false,
  genesisSet: { ...TEST_CERTIFICATE_WORKLOAD },
  ...extra,
});

const json = async (url: string, init?: RequestInit) => {
  const r = await fetch(url, init);
  return { status: r.status, body: (await r.json()) as Record<string, unknown> };
};

describe('start-up: the API before the network', () => {
  const cleanup: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const f of cleanup.splice(0).reverse()) await f();
  });

  it('answers /health, /node and block submissions while networking starts, under the id it keeps', async () => {
    const dataDir = tempDir();
    cleanup.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const node = new HeldNode(options(dataDir));
    cleanup.push(() => node.stop());
    const starting = node.start();
    await waitFor(() => node.url !== '', 20_000, 'the API to listen');
    expect(node.networkStarting).toBe(true);
    expect(node.p2p).toBeUndefined();
    const id = peerIdFromKeyFile(dataDir, PEER_KEY_FILE);
    expect(id).toMatch(/^12D3KooW/);

    const health = await json(`${node.url}/health`);
    expect(health.status).toBe(200);
    expect(health.body.node_id).toBe(id);
    const info = await json(`${node.url}/node`);
    expect(info.body).toMatchObject({ id, p2p: 'starting', peer_count: 0, listen_addrs: [] });
    const peers = await json(`${node.url}/node/peers`, {
      headers: { authorization: `Bearer ${node.adminToken}` },
    });
    expect((peers.body.p2p as { state: string }).state).toBe('starting');
    const toggle = await json(`${node.url}/node/p2p`, {
      method: 'POST',
      headers: { authorization: `Bearer ${node.adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ running: false }),
    });
    expect(toggle.status).toBe(503);
    expect(String(toggle.body.error)).toMatch(/still starting/);

    // No verify worker until a signature is to be checked; the first submission starts one.
    expect(node.verifyPool.workload()).toHaveLength(0);
    const client = new LedgerClient(node.url, { adminToken: node.adminToken });
    const seed = globalThis.crypto.getRandomValues(new Uint8Array(32));
    const wallet = await Wallet.open(client, seed);
    const claim = await wallet.claim(50n * XE);
    expect(node.verifyPool.workload()).toHaveLength(1);
    expect(node.ledger.getBlock(claim.hash!)).toBeDefined();

    node.release();
    await starting;
    expect(node.networkStarting).toBe(false);
    expect(node.p2p?.peerId).toBe(id);
    const after = await json(`${node.url}/node`);
    expect(after.body).toMatchObject({ id, p2p: 'running' });
    expect(after.body.listen_addrs).toEqual(
      expect.arrayContaining([
        expect.stringMatching(new RegExp(`^/ip4/127\\.0\\.0\\.1/tcp/\\d+/p2p/${id}$`)),
      ]),
    );
    await node.stop();

    // The block taken while networking started is there after a restart, and so is the id.
    const again = new LedgerNode(options(dataDir));
    cleanup.push(() => again.stop());
    await again.start();
    expect((await json(`${again.url}/health`)).body.node_id).toBe(id);
    expect(again.ledger.getBlock(claim.hash!)).toBeDefined();
    const balance = await json(`${again.url}/accounts/${wallet.address}/balance`);
    expect(balance.status).toBe(200);
    expect(JSON.stringify(balance.body)).toContain(`"${50n * XE}"`);
  });

  it('still fails the start when networking cannot start, and closes the API it opened', async () => {
    const dataDir = tempDir();
    cleanup.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const taken: Server = createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
    cleanup.push(() => new Promise<void>((r) => taken.close(() => r())));
    const port = (taken.address() as { port: number }).port;
    const node = new HeldNode(options(dataDir, { p2pPort: port }));
    const starting = node.start();
    await waitFor(() => node.url !== '', 20_000, 'the API to listen');
    const url = node.url;
    expect((await fetch(`${url}/health`)).status).toBe(200);
    node.release();
    await expect(starting).rejects.toThrow(/EADDRINUSE|already in use/);
    await expect(fetch(`${url}/health`)).rejects.toThrow();
  });
});

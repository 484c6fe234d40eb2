import { join } from 'node:path';
import type { Wallet } from '../../node-core/client/wallet.ts';
import type { NodeOptions } from '../../node-core/node.ts';
import { seedOf, startTestNode, type TestNode, waitFor } from './node.ts';

/** Peer-to-peer networking on loopback, on a free port. */
export const P2P = { p2p: true, p2pPort: 0, p2pBind: '127.0.0.1' } as const;

export async function listenAddr(t: TestNode): Promise<string> {
  const info = await t.client.get<{ listen_addrs: string[] }>('/node');
  return info.listen_addrs.find((a) => a.includes('/ip4/127.0.0.1/'))!;
}

export async function peerCount(t: TestNode): Promise<number> {
  return (await t.client.get<{ peer_count: number }>('/node')).peer_count;
}

export async function finalizedOn(t: TestNode, hash: string): Promise<boolean> {
  return (await t.client.block(hash))?.finalized === true;
}

/** Two connected nodes on one network: the first one's representative holds the genesis weight. */
export async function twoNodes(
  optsA: Partial<NodeOptions> = {},
  optsB: Partial<NodeOptions> = {},
): Promise<[TestNode, TestNode]> {
  const a = await startTestNode({ ...P2P, ...optsA });
  let b: TestNode;
  try {
    b = await startTestNode({
      ...P2P,
      genesisDir: join(a.dataDir, 'genesis'),
      dial: [await listenAddr(a)],
      ...optsB,
    });
  } catch (e) {
    await a.stop();
    throw e;
  }
  await waitFor(async () => (await peerCount(a)) === 1, 10_000, 'peers');
  return [a, b];
}

/** Three nodes of one network, B and C dialling A, once A sees both and each of them sees a peer. */
export async function threeNodes(): Promise<[TestNode, TestNode, TestNode]> {
  const a = await startTestNode({ ...P2P });
  const started: TestNode[] = [a];
  try {
    const genesisDir = join(a.dataDir, 'genesis');
    const dial = [await listenAddr(a)];
    const b = await startTestNode({ ...P2P, genesisDir, dial });
    started.push(b);
    const c = await startTestNode({ ...P2P, genesisDir, dial });
    started.push(c);
    await waitFor(
      async () => (await peerCount(a)) === 2 && (await peerCount(b)) >= 1 && (await peerCount(c)) >= 1,
      15_000,
      'peers',
    );
    return [a, b, c];
  } catch (e) {
    await Promise.all(started.map((t) => t.stop()));
    throw e;
  }
}

/**
 * Three nodes in a line, a - b - c: a takes one inbound connection (b's), so c reaches a only
 * through b. Resolves once b sees both and c sees b; the caller stops them (pushed to `started`).
 */
export async function lineOfThree(started: TestNode[]): Promise<[TestNode, TestNode, TestNode]> {
  const a = await startTestNode({ ...P2P, p2pMaxInbound: 1 });
  started.push(a);
  const genesisDir = join(a.dataDir, 'genesis');
  const b = await startTestNode({ ...P2P, genesisDir, dial: [await listenAddr(a)] });
  started.push(b);
  const c = await startTestNode({ ...P2P, genesisDir, dial: [await listenAddr(b)] });
  started.push(c);
  return [a, b, c];
}

/** Ten accounts at once on `t`: a claim and three sends each, so commits take several blocks together. */
export async function burst(t: TestNode): Promise<string[]> {
  const wallets: Wallet[] = await Promise.all(Array.from({ length: 10 }, () => t.wallet()));
  const hashes: string[] = [];
  await Promise.all(
    wallets.map(async (w, i) => {
      hashes.push((await w.claim(1_000_000n)).hash!);
      for (let k = 0; k < 3; k++)
        hashes.push((await w.send(wallets[(i + 1) % wallets.length]!.address, 1n)).hash!);
    }),
  );
  return hashes;
}

/** Waits until every one of `hashes` is final on every node. */
export async function finalEverywhere(hashes: string[], nodes: TestNode[]): Promise<void> {
  for (const t of nodes) for (const h of hashes) await waitFor(() => finalizedOn(t, h), 20_000, `${h} final`);
}

/** Delegates `amount` of `t`'s treasury XE to `to`'s representative; returns that representative. */
export async function delegateTo(t: TestNode, to: TestNode, amount: bigint): Promise<string> {
  const rep = (await to.client.node()).address;
  await delegate(t, rep, amount);
  return rep;
}

/**
 * Moves `amount` of the treasury's XE to a new account that delegates it to `rep`; returns both
 * wallets (the holder can send it back).
 */
export async function delegate(
  t: TestNode,
  rep: string,
  amount: bigint,
): Promise<{ treasury: Wallet; holder: Wallet }> {
  const treasury = await t.wallet(seedOf(t.keys.treasury.seed_hex));
  const holder = await t.wallet();
  const sent = await treasury.send(holder.address, amount);
  holder.delegateTo(rep);
  await holder.receive({
    hash: sent.hash!,
    from: treasury.address,
    amount,
    asset: 'XE',
    timestamp: sent.timestamp,
  });
  return { treasury, holder };
}

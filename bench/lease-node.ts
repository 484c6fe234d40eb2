/**
 * A node for the lease benchmark, run as a child process (forked with an IPC channel): a development
 * network with short lease windows, as `ledger-node` would start it, plus the one thing the HTTP API
 * cannot do, adding performance certificates to the node's book (they travel by gossip otherwise).
 *
 * argv: data directory, proof-of-work difficulty (hex). Sends {url} when ready; takes
 * {certificates: string[]} (certificate JSON) and answers {added: n}; takes {idle: true} and answers
 * {idle: boolean} once every block is final (false after 60 s); stops on disconnect.
 */
import { LedgerNode } from '../node-core/node.ts';
import { decodeCertificate } from '../node-core/protocol/certificate.ts';
import { parseJson } from '../node-core/protocol/json.ts';

const MINUTE_NS = 60_000_000_000n;
/** Settle grace 1 min, force-settle gap 21 min (> 2 x 10 min skew), escrow expiry 30 min. */
const BENCH_LEASE_TIMING = {
  lease_settle_grace_ns: MINUTE_NS,
  lease_force_settle_gap_ns: 21n * MINUTE_NS,
  lease_escrow_expiry_ns: 30n * MINUTE_NS,
};

const [dataDir, difficulty] = process.argv.slice(2);
if (dataDir === undefined || difficulty === undefined || process.send === undefined) {
  console.error('usage: forked with an IPC channel: lease-node.ts DATA_DIR POW_DIFFICULTY_HEX');
  process.exit(2);
}
const send = process.send.bind(process);

const node = new LedgerNode({
  dataDir,
  apiPort: 0,
  powDifficulty: BigInt(`0x${difficulty}`),
  rateLimit: false,
  p2p: false,
  uiDir: false,
  genesisSet: BENCH_LEASE_TIMING,
  // No benchmark of its own running beside the timed phases.
  ownCertificate: false,
});
await node.start();

let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  await node.stop();
  process.exit(0);
};
process.on('disconnect', () => void stop());
process.on('SIGTERM', () => void stop());

/** Waits (up to 60 s) until every block is finalized and consensus has nothing left to flush. */
async function settled(): Promise<boolean> {
  const end = Date.now() + 60_000;
  for (;;) {
    await node.consensus.idle();
    if (node.ledger.unfinalizedAccounts().length === 0) return true;
    if (Date.now() > end) return false;
    await new Promise((r) => setTimeout(r, 20));
  }
}

process.on('message', (m: { certificates?: string[]; idle?: boolean }) => {
  void (async () => {
    if (m.idle) return send({ idle: await settled() });
    let added = 0;
    for (const text of m.certificates ?? [])
      if (await node.certificates.add(decodeCertificate(parseJson(text)))) added++;
    send({ added });
  })();
});
send({ url: node.url });

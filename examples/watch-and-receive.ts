/**
 * Watches an account and receives every send to it as it arrives: the node keeps sends as pending
 * until the account signs a `receive` block for each; this script does that, with the proof of work
 * on every core.
 *
 *   LEDGER_SEED=<64 hex> node watch-and-receive.ts
 *
 * LEDGER_NODE_URL (default http://127.0.0.1:8080), LEDGER_SEED (the account's 32-byte seed, hex: keep it
 * secret), POLL_MS (default 1000), MAX_RECEIVES (stop after that many; default: until Ctrl-C).
 */
import { LedgerClient, NodeUnreachable, Wallet } from 'ledger-node-desktop/client';
import { createPowEngine } from 'ledger-node-desktop/pow';
import { formatUnits, hexToBytes } from 'ledger-node-desktop/protocol';

const url = process.env.LEDGER_NODE_URL ?? 'http://127.0.0.1:8080';
const seed = hexToBytes(process.env.LEDGER_SEED ?? '', 32, 'LEDGER_SEED');
const pollMs = Number(process.env.POLL_MS ?? 1000);
const max = Number(process.env.MAX_RECEIVES ?? 0);

const client = new LedgerClient(url);
const pow = createPowEngine();
const wallet = await Wallet.open(client, seed, (target, difficulty) => pow.solve(target, difficulty));
console.log(`watching ${wallet.address} on ${url}`);

let stop = false;
process.once('SIGINT', () => (stop = true));
let received = 0;
while (!stop && (max === 0 || received < max)) {
  try {
    for (const p of await client.pending(wallet.address)) {
      const block = await wallet.receive(p);
      received++;
      console.log(`received ${formatUnits(p.amount)} ${p.asset} from ${p.from} in block ${block.hash}`);
      if (max !== 0 && received >= max) break;
    }
  } catch (e) {
    // A node restarting is no reason to stop watching.
    if (!(e instanceof NodeUnreachable)) throw e;
    console.error(`node unreachable (${e.message}); retrying`);
  }
  await new Promise((r) => setTimeout(r, pollMs));
}
console.log(`balance ${formatUnits(wallet.balances.XE ?? 0n)} XE`);
await pow.close();

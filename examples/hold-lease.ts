/**
 * Holds a lease open: renews it shortly before it ends, a segment at a time, at the provider's
 * current price, for as long as the script runs (and the account has XUSD). The node can do the same
 * for its own account (`POST /lease/{hash}/hold`); this is the consumer's own key doing it.
 *
 *   LEDGER_SEED=<64 hex> node hold-lease.ts LEASE_HASH
 *
 * LEDGER_NODE_URL (default http://127.0.0.1:8080), LEDGER_SEED (the consumer's seed, hex),
 * SEGMENT_SECS (each renewal, default 60), RENEW_BEFORE_SECS (default 30), MAX_RENEWALS (stop after
 * that many; default: until Ctrl-C or the lease ends).
 */
import { LeasingClient, LedgerClient, leaseEnd, renewalOf, Wallet } from 'ledger-node-desktop/client';
import { createPowEngine } from 'ledger-node-desktop/pow';
import { formatUnits, hexToBytes } from 'ledger-node-desktop/protocol';

const leaseHash = process.argv[2] ?? '';
if (!/^[0-9a-f]{64}$/.test(leaseHash)) {
  console.error('usage: node hold-lease.ts LEASE_HASH');
  process.exit(2);
}
const url = process.env.LEDGER_NODE_URL ?? 'http://127.0.0.1:8080';
const seed = hexToBytes(process.env.LEDGER_SEED ?? '', 32, 'LEDGER_SEED');
const segment = BigInt(process.env.SEGMENT_SECS ?? 60);
const before = BigInt(process.env.RENEW_BEFORE_SECS ?? 30) * 1_000_000_000n;
const max = Number(process.env.MAX_RENEWALS ?? 0);

const client = new LedgerClient(url);
const leasing = new LeasingClient(client);
const pow = createPowEngine();
const wallet = await Wallet.open(client, seed, (target, difficulty) => pow.solve(target, difficulty));
let stop = false;
process.once('SIGINT', () => (stop = true));
let renewals = 0;
console.log(`holding lease ${leaseHash} in segments of ${segment} s`);
try {
  while (!stop && (max === 0 || renewals < max)) {
    const lease = await leasing.lease(leaseHash);
    if (!lease) throw new Error(`the node knows no lease ${leaseHash}`);
    if (lease.consumer !== wallet.address)
      throw new Error(`lease ${leaseHash} is not paid by ${wallet.address}`);
    const end = leaseEnd(lease);
    const now = BigInt(Date.now()) * 1_000_000n;
    if (lease.state !== 'accepted' || end === undefined) {
      if (lease.state !== 'created') {
        console.log(`lease is ${lease.state}: nothing to hold`);
        break;
      }
    } else if (end <= now) {
      console.log('lease has ended');
      break;
    } else if (end - now <= before) {
      const { fields, cost } = await renewalOf(leasing, lease, segment);
      await wallet.refresh();
      const have = wallet.balances.XUSD ?? 0n;
      if (have < cost) {
        console.log(
          `cannot renew: ${formatUnits(have)} XUSD left, a segment costs ${formatUnits(cost)} XUSD`,
        );
        break;
      }
      const block = await wallet.writeBlock({ ...fields, balance: have - cost });
      renewals++;
      const newEnd = new Date(Number((end + segment * 1_000_000_000n) / 1_000_000n)).toISOString();
      console.log(
        `renewed by ${segment} s for ${formatUnits(cost)} XUSD in block ${block.hash}; now ends ${newEnd}`,
      );
      continue;
    }
    await new Promise((r) => setTimeout(r, 1000));
  }
} finally {
  await pow.close();
}

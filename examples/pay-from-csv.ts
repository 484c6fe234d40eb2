/**
 * Pays every line of a CSV file (`address,amount[,memo]`; amounts in XE with up to 6 decimals; a
 * header line and lines starting with # are skipped). The whole file is checked first, and the
 * total against the balance: a bad line or too small a balance pays nothing.
 *
 *   LEDGER_SEED=<64 hex> node pay-from-csv.ts payments.csv
 *
 * LEDGER_NODE_URL (default http://127.0.0.1:8080), LEDGER_SEED (the paying account's seed, hex).
 */
import { readFileSync } from 'node:fs';
import { BlockRejected, LedgerClient, Wallet } from 'ledger-node-desktop/client';
import { createPowEngine } from 'ledger-node-desktop/pow';
import { formatUnits, hexToBytes, parseUnits } from 'ledger-node-desktop/protocol';

const file = process.argv[2];
if (!file) {
  console.error('usage: node pay-from-csv.ts FILE.csv');
  process.exit(2);
}
const url = process.env.LEDGER_NODE_URL ?? 'http://127.0.0.1:8080';
const seed = hexToBytes(process.env.LEDGER_SEED ?? '', 32, 'LEDGER_SEED');

interface Payment {
  line: number;
  to: string;
  amount: bigint;
  memo?: string;
}
const payments: Payment[] = [];
readFileSync(file, 'utf8')
  .split(/\r?\n/)
  .forEach((text, i) => {
    const t = text.trim();
    if (t === '' || t.startsWith('#') || /^address\s*,/i.test(t)) return;
    const [to = '', amount = '', memo] = t.split(',').map((x) => x.trim());
    if (!/^[0-9a-f]{64}$/.test(to)) throw new Error(`${file}:${i + 1}: "${to}" is not an address`);
    payments.push({
      line: i + 1,
      to,
      amount: parseUnits(amount, `${file}:${i + 1}: amount`),
      ...(memo ? { memo } : {}),
    });
  });

const client = new LedgerClient(url);
const pow = createPowEngine();
const wallet = await Wallet.open(client, seed, (target, difficulty) => pow.solve(target, difficulty));
const total = payments.reduce((sum, p) => sum + p.amount, 0n);
const have = wallet.balances.XE ?? 0n;
if (total > have) {
  console.error(
    `insufficient funds: the file pays ${formatUnits(total)} XE, ${wallet.address} holds ${formatUnits(have)} XE`,
  );
  await pow.close();
  process.exit(1);
}
try {
  for (const p of payments) {
    const block = await wallet.send(p.to, p.amount, 'XE', p.memo);
    console.log(`paid ${formatUnits(p.amount)} XE to ${p.to} (line ${p.line}) in block ${block.hash}`);
  }
} catch (e) {
  // The client already retried what could succeed later; what is left is final.
  if (e instanceof BlockRejected) console.error(`the node refused a payment: ${e.message}`);
  throw e;
} finally {
  await pow.close();
}
console.log(
  `paid ${payments.length} payments, ${formatUnits(total)} XE in all; balance ${formatUnits(wallet.balances.XE ?? 0n)} XE`,
);

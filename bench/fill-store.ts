import { fillStore } from './startup.ts';

/**
 * `node bench/fill-store.ts DIR N`: a data directory holding N one-claim accounts, filled through the
 * ledger in-process (500,000 take about 2 minutes here), for `-- ab`'s BENCH_AB_STORE_A/B.
 */
const [dir, n] = process.argv.slice(2);
if (!dir || !(Number(n) > 0)) throw new Error('usage: node bench/fill-store.ts DIR N');
await fillStore(dir, Number(n), (l) => console.log(l));

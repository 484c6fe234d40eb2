import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { abHeadline, type Side, sideArgs, sideFlags, sortedList } from './ab-sides.ts';
import { alternate, type AlternatePhase, prepareSides } from './alternate.ts';
import { median } from './measure.ts';
import { ingestArgs, ingestStreams } from './node.ts';
import { spawnNode, type SpawnedNode } from './spawn-node.ts';

/**
 * `npm run bench -- ab`: the node's CPU per block at ingest, two nodes compared phase by phase.
 *
 * This machine's speed drifts by 20-40 % within minutes (the same code gave 253 and 356 µs a block
 * in two runs an hour apart), so two runs of `-- node` cannot show a change of a few percent. Here
 * two nodes run side by side, idle in turn: each round sends a short ingest phase (16 clients,
 * 8,000 fresh blocks) to one, then to the other, the order swapped every round, so the drift falls
 * on both alike. It prints each round's CPU per block, the B − A difference of every round, and
 * the medians.
 *
 * - `BENCH_AB_BIN`: node B's command (`bin/ledger-node.js` of another checkout, with its own
 *   `node_modules`); A is always this checkout's. Unset, B is this checkout too: an A/A run, which
 *   shows what the harness alone gives. Two here: medians of B − A +10 and −1 µs, single rounds
 *   from −70 to +46 µs. So one round says nothing, and a median within about 10 µs is noise.
 * - `BENCH_AB_FLAGS_A`, `BENCH_AB_FLAGS_B`: V8 flags of each node instead of the command's own.
 * - `BENCH_AB_ARGS_A`, `BENCH_AB_ARGS_B`: command-line options added to each node's own (for
 *   instance `--verify-threads 0`).
 * - `BENCH_AB_STORE_A`, `BENCH_AB_STORE_B`: a data directory each node starts on (copied first), for
 *   instance one filled with 500,000 accounts (`bench/fill-store.ts`) against a new one: whether a
 *   block costs more in a ledger that holds more.
 * - `BENCH_AB_ROUNDS` (default 10).
 *
 * Both nodes start as the ingest bench starts its node (`ingestArgs`, BENCH_NODE_ARGS included), and
 * each phase's blocks are the ingest bench's kind (`ingestStreams`), 10 accounts a client.
 */

const CLIENTS = 16;
/** Accounts of 50 blocks per client in a phase: 8,000 blocks. */
const ACCOUNTS_PER_CLIENT = 10;
const WARMUP_PHASES = 2;
const ROUNDS = Math.max(2, Number(process.env.BENCH_AB_ROUNDS ?? 10));

/** Node `n` as the ingest bench starts its node, with that node's own flags, options and store. */
const startNode = (n: Side, dir: string, bin?: string) => {
  const dataDir = join(dir, n.toLowerCase());
  const store = process.env[`BENCH_AB_STORE_${n}`];
  if (store) cpSync(store, dataDir, { recursive: true });
  return spawnNode([...ingestArgs(dataDir, false), ...sideArgs(n)], { bin, flags: sideFlags(n) });
};

export default async function benchAb(log: (line: string) => void): Promise<Record<string, number>> {
  const dir = mkdtempSync(join(tmpdir(), 'ledger-bench-ab-'));
  const bin = process.env.BENCH_AB_BIN;
  log(abHeadline(bin, (n) => process.env[`BENCH_AB_STORE_${n}`]));
  const nodes: SpawnedNode[] = [];
  try {
    nodes.push(await startNode('A', dir));
    nodes.push(await startNode('B', dir, bin));
    const [a, b] = await prepareSides(nodes, WARMUP_PHASES + ROUNDS, (id) =>
      ingestStreams(CLIENTS, id, ACCOUNTS_PER_CLIENT),
    );
    const phases = await alternate([a, b], {
      warmup: WARMUP_PHASES,
      rounds: ROUNDS,
      onRound: (r, a, b) =>
        log(
          `round ${r + 1}: A ${a.cpu.total.toFixed(0)} µs a block (main ${a.cpu.main.toFixed(0)}), ${(a.rate / 1000).toFixed(2)} k/s;` +
            ` B ${b.cpu.total.toFixed(0)} µs (main ${b.cpu.main.toFixed(0)}), ${(b.rate / 1000).toFixed(2)} k/s`,
        ),
    });
    const diff = (f: (p: AlternatePhase) => number) => phases[0]!.map((a, r) => f(phases[1]![r]!) - f(a));
    const total = diff((p) => p.cpu.total);
    log(
      `B − A, node CPU a block, each round (sorted): ${sortedList(total, 0)} µs;` +
        ` B cheaper in ${total.filter((d) => d < 0).length} of ${ROUNDS}`,
    );
    const parts: [string, (p: AlternatePhase) => number][] = [
      ['all threads', (p) => p.cpu.total],
      ['main', (p) => p.cpu.main],
      ['verify workers', (p) => p.cpu.workers],
      ['V8 helpers', (p) => p.cpu.v8],
      ['libuv pool', (p) => p.cpu.pool],
    ];
    for (const [name, f] of parts)
      log(
        `median µs a block, ${name}: A ${median(phases[0]!.map(f)).toFixed(1)}, B ${median(phases[1]!.map(f)).toFixed(1)};` +
          ` median B − A ${median(diff(f)).toFixed(1)}`,
      );
    return {
      a_cpu_us_per_block: median(phases[0]!.map((p) => p.cpu.total)),
      b_cpu_us_per_block: median(phases[1]!.map((p) => p.cpu.total)),
      median_b_minus_a_us: median(total),
      b_cheaper_rounds: total.filter((d) => d < 0).length,
      rounds: ROUNDS,
    };
  } finally {
    await Promise.all(nodes.map((n) => n.stop()));
    rmSync(dir, { recursive: true, force: true });
  }
}

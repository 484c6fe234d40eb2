import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { alternate, type AlternateSide } from './alternate.ts';
import { driveIngest } from './ingest-client.ts';
import { nodeInfo, waitForStartupWork } from './ingest-run.ts';
import { median } from './measure.ts';
import { ingestArgs, ingestStreams, openingStreams } from './node.ts';
import { spawnNode, type SpawnedNode } from './spawn-node.ts';

/**
 * `npm run bench -- reps`: ingest on a ledger whose XE is delegated to many representatives, against
 * the same ledger delegated to one (issue #18). Consensus asks, with every block applied, for one
 * representative's weight and the total; the bench's other ledgers have a single representative,
 * so a cost that grows with their number would not show anywhere else.
 *
 * Two nodes side by side, compared phase by phase (alternate.ts). Before the phases each takes
 * BENCH_REPS accounts (default 10,000) opened by a claim: on one node each delegates to a
 * representative of its own, on the other all to the same one. In the phases (16 clients, 8,000
 * blocks) every block names its account's representative, so each moves weight: on the first node
 * drawn from its many, on the second the one. BENCH_REPS_ROUNDS rounds (default 5), 2 warm-up
 * phases before them; the figure is the median round's CPU a block of the many against the one.
 */
const REPS = Math.max(1, Number(process.env.BENCH_REPS ?? 10_000));
const ROUNDS = Math.max(1, Number(process.env.BENCH_REPS_ROUNDS ?? 5));
const WARMUP = 2;
const CLIENTS = 16;
/** Accounts of 50 blocks per client in a phase: 8,000 blocks. */
const ACCOUNTS_PER_CLIENT = 10;

const randomRep = () => randomBytes(32).toString('hex');

/** A started node given its ledger of `reps` (the representatives its openings delegate to). */
async function prepare(node: SpawnedNode, reps: string[]): Promise<AlternateSide> {
  const id = (await nodeInfo(node.url)).network_id;
  await waitForStartupWork(node.url);
  const run = await driveIngest(
    node.url,
    openingStreams(CLIENTS, id, REPS, (i) => reps[i % reps.length]!),
  );
  if (run.failed) throw new Error(`openings: ${run.failed} failed, first: ${run.firstError}`);
  const pick = () => reps[Math.floor(Math.random() * reps.length)]!;
  return {
    node,
    phases: Array.from({ length: WARMUP + ROUNDS }, () =>
      ingestStreams(CLIENTS, id, ACCOUNTS_PER_CLIENT, pick),
    ),
  };
}

export default async function benchReps(log: (line: string) => void): Promise<Record<string, number>> {
  const dir = mkdtempSync(join(tmpdir(), 'ledger-bench-reps-'));
  const nodes: SpawnedNode[] = [];
  try {
    nodes.push(await spawnNode(ingestArgs(join(dir, 'many'), false)));
    nodes.push(await spawnNode(ingestArgs(join(dir, 'one'), false)));
    const many = await prepare(nodes[0]!, Array.from({ length: REPS }, randomRep));
    const one = await prepare(nodes[1]!, [randomRep()]);
    const counts = [
      (await nodeInfo(many.node.url)).representatives,
      (await nodeInfo(one.node.url)).representatives,
    ];
    log(
      `representatives with weight: ${counts[0]} on one node, ${counts[1]} on the other (the genesis's included)`,
    );
    const [m, o] = await alternate([many, one], {
      warmup: WARMUP,
      rounds: ROUNDS,
      onRound: (r, a, b) =>
        log(
          `round ${r + 1}: ${counts[0]} representatives ${a.cpu.total.toFixed(0)} µs a block (main ${a.cpu.main.toFixed(0)}), ${(a.rate / 1000).toFixed(2)} k/s;` +
            ` ${counts[1]}: ${b.cpu.total.toFixed(0)} µs (main ${b.cpu.main.toFixed(0)}), ${(b.rate / 1000).toFixed(2)} k/s`,
        ),
    });
    const ratios = m.map((p, r) => p.cpu.total / o[r]!.cpu.total);
    const rates = m.map((p, r) => p.rate / o[r]!.rate);
    const cpuMany = median(m.map((p) => p.cpu.total));
    const cpuOne = median(o.map((p) => p.cpu.total));
    log(
      `ingest with ${counts[0]} representatives: ${cpuMany.toFixed(0)} µs a block against ${cpuOne.toFixed(0)} with ${counts[1]}` +
        ` (medians): ${median(ratios).toFixed(2)}x the CPU a block (rounds ${ratios.map((x) => x.toFixed(2)).join(', ')}),` +
        ` ${median(rates).toFixed(2)}x the rate`,
    );
    return {
      representatives: counts[0]!,
      cpu_us_per_block_many: cpuMany,
      cpu_us_per_block_one: cpuOne,
      cpu_ratio: median(ratios),
      rate_ratio: median(rates),
    };
  } finally {
    await Promise.all(nodes.map((n) => n.stop()));
    rmSync(dir, { recursive: true, force: true });
  }
}

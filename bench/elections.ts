import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { alternate, type AlternateSide } from './alternate.ts';
import { driveIngest } from './ingest-client.ts';
import { nodeInfo, waitForStartupWork } from './ingest-run.ts';
import { median, readiness } from './measure.ts';
import { ingestArgs, openingStreams } from './node.ts';
import { spawnNode, type SpawnedNode } from './spawn-node.ts';

/**
 * `npm run bench -- elections`: ingest while a representative holding 40 % of the weight is
 * offline, against the same ledger with all weight online (issue #18). With 40 % silent no block
 * reaches the 67 % quorum: each waits for the fallback (more than half after 10 s), so every
 * account with a block in the last 10 s has an election open. A cost that grows with their number
 * shows nowhere else: the other benches' blocks are final the moment they are applied.
 *
 * Two nodes side by side, compared phase by phase (alternate.ts). Before the phases each takes
 * 28,000 accounts opened by a claim of 1,000 XE (the genesis holds 42 million): on one node they
 * delegate to a representative no node runs (28 of 70 million, 40 %), on the other to none. Each
 * phase opens 8,000 new accounts (16 clients), one block each: 8,000 open elections on the first
 * node. BENCH_ELECTIONS_ROUNDS rounds (default 5), 2 warm-up phases before them. Then the seconds
 * until the first node has finalized every block (the fallback deciding the last of them).
 */
const ROUNDS = Math.max(1, Number(process.env.BENCH_ELECTIONS_ROUNDS ?? 5));
const WARMUP = 2;
const CLIENTS = 16;
const PHASE_BLOCKS = 8_000;
/** 28,000 claims of 1,000 XE beside the genesis's 42 million: 40 % of the weight. */
const OFFLINE_ACCOUNTS = 28_000;

/** A started node given its 28,000 opening accounts, delegated to `rep` (or to no one). */
async function prepare(node: SpawnedNode, rep: string | undefined): Promise<AlternateSide> {
  const id = (await nodeInfo(node.url)).network_id;
  await waitForStartupWork(node.url);
  const run = await driveIngest(
    node.url,
    openingStreams(CLIENTS, id, OFFLINE_ACCOUNTS, () => rep),
  );
  if (run.failed) throw new Error(`openings: ${run.failed} failed, first: ${run.firstError}`);
  return {
    node,
    phases: Array.from({ length: WARMUP + ROUNDS }, () => openingStreams(CLIENTS, id, PHASE_BLOCKS)),
  };
}

export default async function benchElections(log: (line: string) => void): Promise<Record<string, number>> {
  const dir = mkdtempSync(join(tmpdir(), 'ledger-bench-elections-'));
  const nodes: SpawnedNode[] = [];
  try {
    nodes.push(await spawnNode(ingestArgs(join(dir, 'stalled'), false)));
    nodes.push(await spawnNode(ingestArgs(join(dir, 'quorum'), false)));
    const stalled = await prepare(nodes[0]!, randomBytes(32).toString('hex'));
    const quorum = await prepare(nodes[1]!, undefined);
    const [s, q] = await alternate([stalled, quorum], {
      warmup: WARMUP,
      rounds: ROUNDS,
      onRound: (r, a, b) =>
        log(
          `round ${r + 1}: 40 % offline ${a.cpu.total.toFixed(0)} µs a block (main ${a.cpu.main.toFixed(0)}), ${(a.rate / 1000).toFixed(2)} k/s;` +
            ` all online ${b.cpu.total.toFixed(0)} µs (main ${b.cpu.main.toFixed(0)}), ${(b.rate / 1000).toFixed(2)} k/s`,
        ),
    });
    const open = (await readiness(stalled.node.url)).unfinalized_positions;
    const t0 = performance.now();
    let last = await readiness(stalled.node.url);
    while (last.unfinalized_positions > 0 && performance.now() - t0 < 60_000) {
      await new Promise((r) => setTimeout(r, 100));
      last = await readiness(stalled.node.url);
    }
    const drainS = (performance.now() - t0) / 1000;
    if (last.unfinalized_positions > 0)
      throw new Error(`${last.unfinalized_positions} accounts still unfinalized 60 s after the last phase`);
    const ratios = s.map((p, r) => p.cpu.total / q[r]!.cpu.total);
    const rates = s.map((p, r) => p.rate / q[r]!.rate);
    const cpuStalled = median(s.map((p) => p.cpu.total));
    const cpuQuorum = median(q.map((p) => p.cpu.total));
    log(
      `ingest with 40 % of the weight offline (every block waits for the fallback): ${cpuStalled.toFixed(0)} µs a block` +
        ` against ${cpuQuorum.toFixed(0)} with all online (medians): ${median(ratios).toFixed(2)}x the CPU a block` +
        ` (rounds ${ratios.map((x) => x.toFixed(2)).join(', ')}), ${median(rates).toFixed(2)}x the rate`,
    );
    log(
      `accounts with an election open after the last phase: ${open}; all final ${drainS.toFixed(1)} s later` +
        ` (the fallback is 10 s); ${last.finality_advances} blocks finalized in all`,
    );
    return {
      cpu_us_per_block_offline: cpuStalled,
      cpu_us_per_block_online: cpuQuorum,
      cpu_ratio: median(ratios),
      rate_ratio: median(rates),
      open_elections: open,
      drain_s: drainS,
    };
  } finally {
    await Promise.all(nodes.map((n) => n.stop()));
    rmSync(dir, { recursive: true, force: true });
  }
}

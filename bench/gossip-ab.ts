import { mkdtempSync, rmSync } from 'node:fs';
import { Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { abHeadline, type Side, sideArgs, sideFlags, sortedList } from './ab-sides.ts';
import { driveIngest } from './ingest-client.ts';
import { waitForStartupWork } from './ingest-run.ts';
import { json, median, nowNs } from './measure.ts';
import { allFinal, chainEnds, gossipRound, type GossipRound, startThree, workload } from './network.ts';
import type { SpawnedNode } from './spawn-node.ts';

/**
 * `npm run bench -- gossip-ab`: two networks of three nodes compared gossip phase by phase (the
 * network bench's throughput figure, #18 target 2, for two builds or settings).
 *
 * The network bench's ratio moved 0.43x-0.59x between rounds of one run on this machine (2026-12-02),
 * so a change of a few percent in what the three nodes spend a block cannot show in it, nor in two
 * runs of it. Here both networks run side by side, idle in turn: each round sends one workload of
 * 8,000 blocks (16 clients at the first node) to one network, then one to the other, the order
 * swapped every round, so the machine's drift falls on both alike. Each phase's figures are the
 * network bench's: blocks final on all three per second, and the CPU a block of the three nodes
 * (all their threads) and of this client.
 *
 * Two A/A runs (2026-12-02): B / A medians 1.05 and 1.05 (rounds 0.98-1.23 in 6 rounds, 0.70-1.17
 * in 12), B − A −41 and −72 µs a block (B cheaper in 5 of 6 and 9 of 12 rounds). The network started
 * second comes out about 5 % ahead whatever it runs, so a setting is run as B and then as A: an
 * effect shows as the two medians moving apart from the A/A one, and one within it is none.
 *
 * - `BENCH_AB_BIN`: network B's command (`bin/ledger-node.js` of another checkout, with its own
 *   `node_modules`); A is always this checkout's. Unset, B is this checkout too (an A/A run).
 * - `BENCH_AB_FLAGS_A`, `BENCH_AB_FLAGS_B`: V8 flags of each network's nodes instead of the command's.
 * - `BENCH_AB_ARGS_A`, `BENCH_AB_ARGS_B`: command-line options added to each network's nodes.
 * - `BENCH_AB_ROUNDS` (default 10).
 */

const ROUNDS = Math.max(2, Number(process.env.BENCH_AB_ROUNDS ?? 10));

interface Network {
  nodes: SpawnedNode[];
  networkId: string;
}

/** The CPU a block of the three nodes together, all their threads. */
const nodesUs = (g: GossipRound) => g.cpu.reduce((s, c) => s + c.total, 0);

export default async function benchGossipAb(log: (line: string) => void): Promise<Record<string, number>> {
  const dir = mkdtempSync(join(tmpdir(), 'ledger-bench-gossip-ab-'));
  const bin = process.env.BENCH_AB_BIN;
  log(abHeadline(bin));
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  const started: SpawnedNode[] = [];
  const start = async (n: Side, command?: string): Promise<Network> => {
    const nodes = await startThree(join(dir, n.toLowerCase()), {
      bin: command,
      flags: sideFlags(n),
      args: sideArgs(n),
    });
    started.push(...nodes);
    await Promise.all(nodes.map((node) => waitForStartupWork(node.url)));
    const { network_id } = await json<{ network_id: string }>(`${nodes[0]!.url}/node`);
    return { nodes, networkId: network_id };
  };
  // Each phase's blocks are built just before it: building one takes this client ~2 s, and all of
  // them up front would hold ~170 MB of signed JSON per network.
  const streamsFor = (net: Network) => workload(net.networkId, nowNs());
  try {
    const nets = [await start('A'), await start('B', bin)] as const;
    // One untimed workload each, as the network bench warms its nodes (V8's tiers, the compilers).
    for (const net of nets) {
      const warmup = streamsFor(net);
      const w = await driveIngest(net.nodes[0]!.url, warmup);
      if (w.failed) throw new Error(`warm-up: ${w.failed} failed, first: ${w.firstError}`);
      await allFinal(agent, net.nodes, chainEnds(warmup));
    }
    const out: [GossipRound[], GossipRound[]] = [[], []];
    for (let r = 0; r < ROUNDS; r++) {
      for (const i of r % 2 === 0 ? [0, 1] : [1, 0]) {
        const net = nets[i]!;
        out[i]!.push(await gossipRound(log, agent, net.nodes, streamsFor(net), r + 1));
      }
      const [a, b] = [out[0][r]!, out[1][r]!];
      log(
        `round ${r + 1}: A ${(a.rate / 1000).toFixed(2)} k/s final on all 3, nodes ${nodesUs(a).toFixed(0)} µs a block;` +
          ` B ${(b.rate / 1000).toFixed(2)} k/s, ${nodesUs(b).toFixed(0)} µs`,
      );
    }
    const ratios = out[0].map((a, r) => out[1][r]!.rate / a.rate);
    const diffs = out[0].map((a, r) => nodesUs(out[1][r]!) - nodesUs(a));
    log(`B / A, blocks final on all 3 a second, each round (sorted): ${sortedList(ratios, 2)}`);
    log(
      `B − A, the three nodes' CPU a block, each round (sorted): ${sortedList(diffs, 0)} µs;` +
        ` B cheaper in ${diffs.filter((d) => d < 0).length} of ${ROUNDS}`,
    );
    const figures = {
      a_final_blocks_per_s: median(out[0].map((g) => g.rate)),
      b_final_blocks_per_s: median(out[1].map((g) => g.rate)),
      b_over_a_rate: median(ratios),
      a_nodes_cpu_us_per_block: median(out[0].map(nodesUs)),
      b_nodes_cpu_us_per_block: median(out[1].map(nodesUs)),
      median_b_minus_a_us: median(diffs),
      b_cheaper_rounds: diffs.filter((d) => d < 0).length,
      rounds: ROUNDS,
    };
    // Each node's median too: where a difference sits (the submitting node, or the receivers).
    const byNode = (side: GossipRound[]) =>
      [0, 1, 2].map((k) => median(side.map((g) => g.cpu[k]!.total)).toFixed(0)).join(' + ');
    log(
      `medians: rate A ${(figures.a_final_blocks_per_s / 1000).toFixed(2)}, B ${(figures.b_final_blocks_per_s / 1000).toFixed(2)} k/s;` +
        ` B / A ${figures.b_over_a_rate.toFixed(3)}; µs a block A ${figures.a_nodes_cpu_us_per_block.toFixed(0)}` +
        ` (${byNode(out[0])}), B ${figures.b_nodes_cpu_us_per_block.toFixed(0)} (${byNode(out[1])});` +
        ` B − A ${figures.median_b_minus_a_us.toFixed(0)}`,
    );
    return figures;
  } finally {
    agent.destroy();
    await Promise.all(started.map((n) => n.stop()));
    rmSync(dir, { recursive: true, force: true });
  }
}

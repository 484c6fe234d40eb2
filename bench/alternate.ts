import { driveIngest, type IngestOptions } from './ingest-client.ts';
import { cpuSplit, type CpuSplit, nodeInfo, threadCpu, waitForStartupWork } from './ingest-run.ts';
import type { SpawnedNode } from './spawn-node.ts';

/**
 * Two running nodes compared phase by phase: each round sends a short ingest phase to one and then
 * to the other, the order swapped every round, so this machine's drift (20-40 % within minutes)
 * falls on both alike. Used by `npm run bench -- ab` (CPU a block of two builds or settings) and by
 * the ingest bench's rate-limit figure (limits on with spread clients against limits off).
 */

/** One side of the comparison: a node, and how its clients reach it in its `n`th phase. */
export interface AlternateSide {
  node: SpawnedNode;
  /** Each phase's blocks, built before any phase is timed (building takes the client's CPU). */
  phases: string[][][];
  /** The clients' options for this side's `n`th phase (warm-up phases counted). */
  drive?: (n: number) => IngestOptions;
}

export interface AlternatePhase {
  cpu: CpuSplit;
  rate: number;
  /** Source addresses the phase's requests came from. */
  addresses: number;
}

/**
 * A side for each started node: once its start-up work is done (its own certificate's benchmark is
 * not ingest), `count` phases of blocks for its network, built by `build` before any phase is timed.
 */
export async function prepareSides(
  nodes: readonly SpawnedNode[],
  count: number,
  build: (networkId: string) => string[][],
): Promise<[AlternateSide, AlternateSide]> {
  const [a, b] = nodes;
  if (nodes.length !== 2 || !a || !b) throw new Error(`prepareSides: ${nodes.length} nodes, not 2`);
  const side = async (node: SpawnedNode): Promise<AlternateSide> => {
    const id = (await nodeInfo(node.url)).network_id;
    await waitForStartupWork(node.url);
    return { node, phases: Array.from({ length: count }, () => build(id)) };
  };
  return [await side(a), await side(b)];
}

async function phase(side: AlternateSide, n: number): Promise<AlternatePhase> {
  const streams = side.phases[n]!;
  const blocks = streams.reduce((k, s) => k + s.length, 0);
  const pid = side.node.proc.pid!;
  const before = threadCpu(pid);
  const run = await driveIngest(side.node.url, streams, side.drive?.(n));
  if (run.failed) throw new Error(`ingest: ${run.failed} failed, first: ${run.firstError}`);
  return { cpu: cpuSplit(pid, before, threadCpu(pid), blocks), rate: run.rate, addresses: run.addresses };
}

/**
 * Runs `warmup` untimed phases on each side, then `rounds` rounds of one phase each, A first in
 * even rounds and B first in odd ones; `onRound` sees each round's pair as it ends. Each side needs
 * `warmup + rounds` phases of blocks.
 */
export async function alternate(
  sides: [AlternateSide, AlternateSide],
  opts: {
    warmup: number;
    rounds: number;
    onRound?: (r: number, a: AlternatePhase, b: AlternatePhase) => void;
  },
): Promise<[AlternatePhase[], AlternatePhase[]]> {
  for (const s of sides)
    if (s.phases.length < opts.warmup + opts.rounds)
      throw new Error(`alternate: ${s.phases.length} phases of blocks for ${opts.warmup + opts.rounds}`);
  for (let w = 0; w < opts.warmup; w++) for (const s of sides) await phase(s, w);
  const out: [AlternatePhase[], AlternatePhase[]] = [[], []];
  for (let r = 0; r < opts.rounds; r++) {
    for (const i of r % 2 === 0 ? [0, 1] : [1, 0]) out[i]!.push(await phase(sides[i]!, opts.warmup + r));
    opts.onRound?.(r, out[0][r]!, out[1][r]!);
  }
  return out;
}

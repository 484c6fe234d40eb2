import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { blockToJson } from '../node-core/protocol/block-json.ts';
import { stringifyJson } from '../node-core/protocol/json.ts';
import { driveIngest } from './ingest-client.ts';
import { cpuSplit, nodeInfo, threadCpu, type ThreadCpu, waitForStartupWork } from './ingest-run.ts';
import { median, nowNs, readiness } from './measure.ts';
import {
  BENCH_DIFFICULTY,
  buildChain,
  fastKey,
  ingestArgs,
  ingestStreams,
  openingStreams,
  seal,
} from './node.ts';
import { spawnNode, type SpawnedNode } from './spawn-node.ts';

/**
 * `npm run bench -- forks`: a fork flood (issue #18). Forks stay open while finality waits, and
 * costs that grow with how many are open show nowhere else: the other benches have none.
 *
 * One node; 40 % of the weight delegated to a representative no node runs (as in `-- elections`),
 * so every block waits for the fallback (10 s) and every conflict stays open until then. Each round
 * opens a few forks, then many (BENCH_FORKS, default 4,000): that many accounts open with a claim
 * and a send, then a rival of each send (answered 202: a conflict opens). While they are open, 16
 * clients submit 8,000 blocks of other accounts; once all have settled, 8,000 more. It prints the
 * node's CPU a settled fork (its main thread from the last reading before the first settled to the
 * first with none open, polled every 20 ms: the two blocks finalized and the conflict settled), few
 * against many, and the CPU a block of the other accounts' blocks with the forks open and without.
 * BENCH_FORKS_ROUNDS rounds (default 2).
 */
const CLIENTS = 16;
const FEW = 200;
const MANY = Math.max(FEW, Number(process.env.BENCH_FORKS ?? 4_000));
const ROUNDS = Math.max(1, Number(process.env.BENCH_FORKS_ROUNDS ?? 2));
/** As `-- elections`: 28,000 claims of 1,000 XE beside the genesis's 42 million, 40 % of the weight. */
const OFFLINE_ACCOUNTS = 28_000;

/** `count` accounts, each a claim and a send, and a rival of each send: [chains, rivals] by client. */
function forkStreams(networkId: string, count: number): [string[][], string[][]] {
  const t0 = nowNs();
  const chains: string[][] = Array.from({ length: CLIENTS }, () => []);
  const rivals: string[][] = Array.from({ length: CLIENTS }, () => []);
  for (let i = 0; i < count; i++) {
    const key = fastKey();
    const chain = buildChain(key, 2, networkId, t0, BENCH_DIFFICULTY);
    const send = JSON.parse(chain[1]!) as { previous: string; balance: string };
    const rival = seal(
      {
        type: 'send',
        account: key.address,
        previous: send.previous,
        balance: BigInt(send.balance) - 1n,
        timestamp: t0 + 1n,
        asset: 'XE',
        destination: randomBytes(32).toString('hex'),
        amount: 2n,
      },
      key,
      networkId,
      BENCH_DIFFICULTY,
    );
    chains[i % CLIENTS]!.push(...chain);
    rivals[i % CLIENTS]!.push(stringifyJson(blockToJson(rival)));
  }
  return [chains, rivals];
}

/** Polls until no block waits for finality (and so no conflict is open); throws after a minute. */
async function drain(url: string): Promise<void> {
  const t0 = performance.now();
  for (;;) {
    const r = await readiness(url);
    if (r.unfinalized_positions === 0 && r.conflicts_open === 0) return;
    if (performance.now() - t0 > 60_000)
      throw new Error(
        `${r.unfinalized_positions} accounts unfinalized, ${r.conflicts_open} conflicts, after 60 s`,
      );
    await new Promise((res) => setTimeout(res, 100));
  }
}

async function ingest(node: SpawnedNode, streams: string[][], status = 201): Promise<number> {
  const pid = node.proc.pid!;
  const before = threadCpu(pid);
  const run = await driveIngest(node.url, streams, { status });
  if (run.failed) throw new Error(`ingest: ${run.failed} failed, first: ${run.firstError}`);
  const blocks = streams.reduce((n, s) => n + s.length, 0);
  return cpuSplit(pid, before, threadCpu(pid), blocks).total;
}

interface ForkRound {
  /** Main-thread µs a fork, from the reading before the first settled to the first with none open. */
  settleUs: number;
  /** Seconds from the first fork settled to the last. */
  settleS: number;
  /** CPU µs a block of other accounts' blocks, with the forks open and with none. */
  openUs: number;
  quietUs: number;
}

async function forkRound(node: SpawnedNode, networkId: string, count: number): Promise<ForkRound> {
  const [chains, rivals] = forkStreams(networkId, count);
  const others = [ingestStreams(CLIENTS, networkId, 10), ingestStreams(CLIENTS, networkId, 10)];
  await ingest(node, chains);
  await ingest(node, rivals, 202);
  const opened = (await readiness(node.url)).conflicts_open;
  if (opened !== count) throw new Error(`${opened} conflicts open, not ${count}`);
  const openUs = await ingest(node, others[0]!);
  const pid = node.proc.pid!;
  let last = { cpu: threadCpu(pid), at: performance.now() };
  let start: { cpu: Map<string, ThreadCpu>; at: number } | undefined;
  for (;;) {
    const reading = { cpu: threadCpu(pid), at: performance.now() };
    const open = (await readiness(node.url)).conflicts_open;
    if (open < count && !start) start = last;
    if (open === 0) {
      const settleUs = cpuSplit(pid, start!.cpu, threadCpu(pid), count).main;
      const settleS = (performance.now() - start!.at) / 1000;
      await drain(node.url);
      return { settleUs, settleS, openUs, quietUs: await ingest(node, others[1]!) };
    }
    last = reading;
    await new Promise((res) => setTimeout(res, 20));
  }
}

export default async function benchForks(log: (line: string) => void): Promise<Record<string, number>> {
  const dir = mkdtempSync(join(tmpdir(), 'ledger-bench-forks-'));
  let node: SpawnedNode | undefined;
  try {
    node = await spawnNode(ingestArgs(join(dir, 'node'), false));
    const id = (await nodeInfo(node.url)).network_id;
    await waitForStartupWork(node.url);
    const offline = randomBytes(32).toString('hex');
    await ingest(
      node,
      openingStreams(CLIENTS, id, OFFLINE_ACCOUNTS, () => offline),
    );
    await drain(node.url);
    const few: ForkRound[] = [];
    const many: ForkRound[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      for (const [count, out] of [
        [FEW, few],
        [MANY, many],
      ] as const) {
        const f = await forkRound(node, id, count);
        out.push(f);
        log(
          `round ${r + 1}, ${count} forks: ${f.settleUs.toFixed(0)} µs of the main thread a fork settled` +
            ` (all in ${f.settleS.toFixed(2)} s); other blocks ${f.openUs.toFixed(0)} µs a block with them open,` +
            ` ${f.quietUs.toFixed(0)} with none`,
        );
      }
    }
    const m = (rs: ForkRound[], f: (r: ForkRound) => number) => median(rs.map(f));
    const settleRatio = m(many, (r) => r.settleUs) / m(few, (r) => r.settleUs);
    const openRatio = m(many, (r) => r.openUs / r.quietUs);
    log(
      `settling ${MANY} forks at once: ${m(many, (r) => r.settleUs).toFixed(0)} µs of the main thread a fork against` +
        ` ${m(few, (r) => r.settleUs).toFixed(0)} for ${FEW} (medians): ${settleRatio.toFixed(2)}x; the last settled` +
        ` ${m(many, (r) => r.settleS).toFixed(2)} s after the first`,
    );
    log(
      `other accounts' blocks with ${MANY} forks open: ${openRatio.toFixed(2)}x the CPU a block with none` +
        ` (${m(many, (r) => r.openUs).toFixed(0)} against ${m(many, (r) => r.quietUs).toFixed(0)} µs)`,
    );
    return {
      settle_us_per_fork_many: m(many, (r) => r.settleUs),
      settle_us_per_fork_few: m(few, (r) => r.settleUs),
      settle_ratio: settleRatio,
      settle_s_many: m(many, (r) => r.settleS),
      open_cpu_ratio: openRatio,
    };
  } finally {
    await node?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

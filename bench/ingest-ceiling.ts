import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawn } from 'node:child_process';
import { driveIngest } from './ingest-client.ts';
import { cpuSplit, threadCpu } from './ingest-run.ts';
import { fmtRate, ratio } from './measure.ts';

/**
 * The ingest ceiling of this machine: the same pre-built blocks and the same clients against the
 * leanest servers made of the node's required parts (see ingest-ceiling-server.ts). They do a
 * fraction of a node's work, so their rates bound what any node design can reach here; printed next
 * to the node's own rate, they show how much of the gap to the target is the node's and how much is
 * the machine's.
 */
const MODES = [
  ['verify', 'fastify + JSON + Ed25519 on 2 worker threads, nothing stored'],
  ['append', '  + fdatasync-ed journal append per group, overlapped with verify'],
  ['lmdb', '  + durable LMDB commit of 3 writes per block instead of the journal'],
  ['lmdb-inline', '    the same, signatures checked on its own thread (the node on 2 cores)'],
] as const;

const SERVER = fileURLToPath(new URL('./ingest-ceiling-server.ts', import.meta.url));

/** A ceiling server's rate and its CPU µs per block (all its threads). */
async function runServer(
  mode: string,
  dir: string,
  streams: string[][],
  warmup: string[][] | undefined,
): Promise<{ rate: number; cpuUs: number }> {
  const workDir = join(dir, `ceiling-${mode}`);
  mkdirSync(workDir, { recursive: true });
  const proc = spawn(process.execPath, [SERVER, mode, workDir], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const url = await new Promise<string>((resolve, reject) => {
      proc.once('exit', (code) => reject(new Error(`ceiling server (${mode}) exited with ${code}`)));
      proc.stdout!.once('data', (d: Buffer) => resolve(d.toString().trim()));
    });
    // Warmed as the node is (bench/node.ts WARMUP), untimed.
    if (warmup) await driveIngest(url, warmup);
    const total = streams.reduce((n, s) => n + s.length, 0);
    const cpu0 = threadCpu(proc.pid!);
    const run = await driveIngest(url, streams);
    const cpuUs = cpuSplit(proc.pid!, cpu0, threadCpu(proc.pid!), total).total;
    if (run.failed > 0)
      throw new Error(`ceiling server (${mode}): ${run.failed} failed, first: ${run.firstError}`);
    return { rate: run.rate, cpuUs };
  } finally {
    const exited = new Promise((r) => proc.once('exit', r));
    proc.kill('SIGTERM');
    await exited;
  }
}

export async function measureIngestCeiling(
  log: (l: string) => void,
  dir: string,
  streams: string[][],
  verifyRate: number,
  nodeRate: number,
  nodeCpuUs: number,
  warmup?: string[][],
): Promise<Record<string, number>> {
  log(`ingest ceiling here: the same ${streams.length} clients and blocks against servers doing only:`);
  const out: Record<string, number> = {};
  for (const [mode, what] of MODES) {
    const { rate, cpuUs } = await runServer(mode, dir, streams, warmup);
    log(`  ${what}: ${fmtRate(rate)} (${ratio(rate, verifyRate)}), ${cpuUs.toFixed(0)} µs CPU per block`);
    const key = mode.replace('-', '_');
    out[`ingest_ceiling_${key}_ratio`] = rate / verifyRate;
    out[`ingest_ceiling_${key}_cpu_us_per_block`] = cpuUs;
  }
  // The faster of the two LMDB servers bounds the rate, the leaner one the CPU a block.
  const lmdbRatio = Math.max(out.ingest_ceiling_lmdb_ratio!, out.ingest_ceiling_lmdb_inline_ratio!);
  const lmdbCpu = Math.min(
    out.ingest_ceiling_lmdb_cpu_us_per_block!,
    out.ingest_ceiling_lmdb_inline_cpu_us_per_block!,
  );
  log(
    `ingest: the node reaches ${((nodeRate / (lmdbRatio * verifyRate)) * 100).toFixed(0)} % of the faster` +
      ` LMDB server's rate, at ${(nodeCpuUs / lmdbCpu).toFixed(2)}x the leaner one's CPU per block`,
  );
  out.ingest_node_cpu_vs_leanest_lmdb = nodeCpuUs / lmdbCpu;
  return out;
}

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LeanHttpConnection } from './lean-http.ts';
import { buildChain, fastKey } from './node.ts';
import { spawnNode } from './spawn-node.ts';
import { type Memory, memoryOf } from './startup.ts';
import { nowNs } from './measure.ts';

/**
 * `npm run bench -- soak` (only when named: it takes 10 minutes): a node run as users run it takes
 * a steady ingest (BENCH_SOAK_RATE blocks/s, default 100, over 4 connections; chains of 50 blocks on
 * ever new accounts) for BENCH_SOAK_SECONDS (default 600) while its resident set is read every 5 s.
 * The figure is the slope of the resident set in MB/min after the first minute (least squares), with
 * its anonymous part (the node's own memory: a leak shows here) and its file part (the store's pages
 * the node has mapped, which grow with the store itself) apart; the second half's slope beside the
 * whole run's says whether growth is slowing. Nothing asserts.
 */

const PROOF_DIFFICULTY = 0xf000000000000000n;
const CONNECTIONS = 4;
const CHAIN = 50;
const SAMPLE_MS = 5_000;
const WARMUP_S = 60;

interface Sample extends Memory {
  t: number;
  blocks: number;
}

/** Least-squares slope of y over x. */
function slope(xs: number[], ys: number[]): number {
  const n = xs.length;
  if (n < 2) return 0;
  const mx = xs.reduce((a, b) => a + b, 0) / n;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  let num = 0;
  let den = 0;
  for (let i = 0; i < n; i++) {
    num += (xs[i]! - mx) * (ys[i]! - my);
    den += (xs[i]! - mx) ** 2;
  }
  return den === 0 ? 0 : num / den;
}

export default async function benchSoak(log: (line: string) => void): Promise<Record<string, number>> {
  const seconds = Number(process.env.BENCH_SOAK_SECONDS ?? 600);
  const rate = Number(process.env.BENCH_SOAK_RATE ?? 100);
  const dir = mkdtempSync(join(tmpdir(), 'ledger-soak-'));
  const node = await spawnNode([
    '--data-dir',
    join(dir, 'soak'),
    '--api-port',
    '0',
    '--p2p-port',
    '0',
    '--rate-limit',
    'off',
    '--pow-difficulty',
    PROOF_DIFFICULTY.toString(16),
    '--log-level',
    'warn',
  ]);
  const samples: Sample[] = [];
  let sent = 0;
  let failed = 0;
  let firstError = '';
  try {
    const { network_id } = (await (await fetch(`${node.url}/node`)).json()) as { network_id: string };
    const start = performance.now();
    const end = start + seconds * 1000;
    const sample = () => {
      const t = (performance.now() - start) / 1000;
      samples.push({ t, blocks: sent, ...memoryOf(node.proc.pid!) });
      const s = samples.at(-1)!;
      if (samples.length % 12 === 1)
        log(
          `soak: ${t.toFixed(0).padStart(4)} s, ${s.blocks} blocks: resident ${s.rss.toFixed(0)} MB ` +
            `(${s.anon.toFixed(0)} anonymous + ${s.file.toFixed(0)} file)`,
        );
    };
    sample();
    const sampler = setInterval(sample, SAMPLE_MS);
    // Each connection posts one block at a time, paced so that all together keep to `rate`.
    const perConnection = rate / CONNECTIONS;
    await Promise.all(
      Array.from({ length: CONNECTIONS }, async () => {
        const conn = LeanHttpConnection.forUrl(node.url);
        let i = 0;
        try {
          while (performance.now() < end) {
            const t0 = nowNs();
            for (const body of buildChain(fastKey(), CHAIN, network_id, t0, PROOF_DIFFICULTY)) {
              const due = start + (i++ / perConnection) * 1000;
              const wait = due - performance.now();
              if (wait > 0) await new Promise((r) => setTimeout(r, wait));
              if (performance.now() >= end) break;
              const type = body.slice(9, body.indexOf('"', 9));
              const r = await conn.post(`/blocks/${type}`, body);
              sent++;
              if (r.status !== 201) {
                failed++;
                firstError ||= `${r.status} ${r.body}`;
              }
            }
          }
        } finally {
          conn.close();
        }
      }),
    );
    clearInterval(sampler);
    sample();
  } finally {
    await node.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  const after = samples.filter((s) => s.t >= Math.min(WARMUP_S, seconds / 2));
  const half = after.filter((s) => s.t >= (after[0]!.t + seconds) / 2);
  const perMin = (ss: Sample[], k: keyof Memory) =>
    slope(
      ss.map((s) => s.t / 60),
      ss.map((s) => s[k]),
    );
  const first = after[0]!;
  const last = samples.at(-1)!;
  log(
    `soak: ${sent} blocks in ${seconds} s at ${rate}/s asked (${(sent / seconds).toFixed(0)}/s done)` +
      `${failed ? `; ${failed} FAILED, first: ${firstError}` : ''}`,
  );
  log(
    `soak: resident ${first.rss.toFixed(0)} MB at ${first.t.toFixed(0)} s -> ${last.rss.toFixed(0)} MB at ${last.t.toFixed(0)} s; ` +
      `slope after ${Math.min(WARMUP_S, seconds / 2)} s: ${perMin(after, 'rss').toFixed(2)} MB/min ` +
      `(anonymous ${perMin(after, 'anon').toFixed(2)}, file ${perMin(after, 'file').toFixed(2)}); ` +
      `second half: ${perMin(half, 'rss').toFixed(2)} MB/min (anonymous ${perMin(half, 'anon').toFixed(2)})`,
  );
  return {
    soak_blocks_per_s: sent / seconds,
    soak_rss_slope_mb_per_min: perMin(after, 'rss'),
    soak_anon_slope_mb_per_min: perMin(after, 'anon'),
    soak_file_slope_mb_per_min: perMin(after, 'file'),
    soak_anon_slope_second_half_mb_per_min: perMin(half, 'anon'),
    soak_rss_end_mb: last.rss,
  };
}

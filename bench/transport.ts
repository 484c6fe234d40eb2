import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { median, ratio } from './measure.ts';

/**
 * The peer-to-peer transport alone: one stream between two libp2p hosts over loopback TCP, carrying
 * messages of a size, with the node's Noise and yamux as it runs them (net/connection-stack.ts)
 * against the libraries as they come, and the node's Noise with the library's yamux between. The
 * figure is the CPU of both hosts a message, each measurement in a process of its own
 * (transport-run.ts), the median of rounds whose order rotates so that drift and position fall on
 * every set-up alike.
 */

const SETUPS = [
  { id: 'libraries', label: 'libraries' },
  { id: 'node-noise', label: "node's Noise with the library's yamux" },
  { id: 'node', label: 'node' },
] as const;

const SIZES = [
  { size: 300, count: 30_000 },
  { size: 1400, count: 20_000 },
  { size: 65_536, count: 1000 },
];
const ROUNDS = 3;
const RUN = fileURLToPath(new URL('./transport-run.ts', import.meta.url));

async function measure(setup: string, size: number, count: number): Promise<number> {
  const { stdout } = await promisify(execFile)(process.execPath, [RUN, setup, String(size), String(count)]);
  const us = Number(stdout.trim());
  if (!Number.isFinite(us)) throw new Error(`transport-run ${setup} ${size}: ${stdout}`);
  return us;
}

export default async function benchTransport(log: (line: string) => void): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  const fmt = (n: number) => (n >= 100 ? n.toFixed(0) : n.toFixed(1));
  for (const { size, count } of SIZES) {
    const per = SETUPS.map(() => [] as number[]);
    for (let round = 0; round < ROUNDS; round++) {
      for (let k = 0; k < SETUPS.length; k++) {
        const i = (k + round) % SETUPS.length;
        per[i]!.push(await measure(SETUPS[i]!.id, size, count));
      }
    }
    const medians = per.map(median);
    const [lib, noiseOnly, node] = medians as [number, number, number];
    log(
      `${size} B messages (${count} a run, median of ${ROUNDS}): CPU a message, both hosts: ` +
        SETUPS.map((s, i) => `${s.label} ${fmt(medians[i]!)} µs`).join(', ') +
        ` (node ${ratio(node, lib)} of the libraries')`,
    );
    out[`cpu_us_per_msg_${size}_libraries`] = lib;
    out[`cpu_us_per_msg_${size}_node_noise`] = noiseOnly;
    out[`cpu_us_per_msg_${size}_node`] = node;
    out[`ratio_${size}`] = node / lib;
  }
  return out;
}

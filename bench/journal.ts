import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { JournalWriter } from '../node-core/ledger/journal-file.ts';
import { median } from './measure.ts';

/**
 * `npm run bench -- journal`: what the write-ahead journal's syncs cost the node's thread (the
 * desktop app's window's too). A writer appends a group's frames (10 of 400 bytes, about a group of
 * ten blocks at ingest) and syncs, again and again; its file opened O_DSYNC (one write in the pool a
 * sync, durable when it returns: the node's default) against an fdatasync after each write (two
 * hand-offs to the pool and back a sync), in alternating phases, in the journal's own directory
 * under the system's temporary one. Printed: the calling thread's CPU and the wall time a sync.
 */

const FRAMES = 10;
const FRAME_BYTES = 400;
const SYNCS = Math.max(100, Number(process.env.BENCH_JOURNAL_SYNCS ?? 2000));
const ROUNDS = 5;

interface Phase {
  cpuUs: number;
  wallUs: number;
}

async function phase(dir: string, index: number, dsync: boolean): Promise<Phase> {
  const w = new JournalWriter(dir, index, { dsync });
  await w.sync(); // the file's creation and first zeros: not part of a sync's cost
  const payload = new Uint8Array(FRAME_BYTES).fill(7);
  const cpu0 = process.threadCpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < SYNCS; i++) {
    // A new payload each, as each group's frame is new (the writer keeps it until written).
    for (let k = 0; k < FRAMES; k++) w.append(payload.slice());
    await w.sync();
  }
  const wallUs = ((performance.now() - t0) * 1000) / SYNCS;
  const cpu = process.threadCpuUsage(cpu0);
  await w.close();
  return { cpuUs: (cpu.user + cpu.system) / SYNCS, wallUs };
}

export default async function benchJournal(log: (line: string) => void): Promise<Record<string, number>> {
  const dir = mkdtempSync(join(tmpdir(), 'ledger-bench-journal-'));
  const dsync: Phase[] = [];
  const fdatasync: Phase[] = [];
  let index = 1;
  try {
    for (let r = 0; r < ROUNDS; r++) {
      // Alternating order: the machine's drift falls on both alike.
      const order = r % 2 === 0 ? [true, false] : [false, true];
      for (const d of order) (d ? dsync : fdatasync).push(await phase(dir, index++, d));
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const cpuD = median(dsync.map((p) => p.cpuUs));
  const cpuF = median(fdatasync.map((p) => p.cpuUs));
  const wallD = median(dsync.map((p) => p.wallUs));
  const wallF = median(fdatasync.map((p) => p.wallUs));
  log(
    `journal sync of ${FRAMES} frames of ${FRAME_BYTES} B, ${SYNCS} syncs a phase, median of ${ROUNDS}: ` +
      `the calling thread's CPU ${cpuD.toFixed(1)} µs opened O_DSYNC against ${cpuF.toFixed(1)} µs with an ` +
      `fdatasync after each write (baseline): ${(cpuD / cpuF).toFixed(2)}x; wall ${wallD.toFixed(0)} against ` +
      `${wallF.toFixed(0)} µs a sync (${(wallD / wallF).toFixed(2)}x)`,
  );
  return {
    sync_thread_cpu_us_dsync: cpuD,
    sync_thread_cpu_us_fdatasync: cpuF,
    sync_thread_cpu_ratio: cpuD / cpuF,
    sync_wall_us_dsync: wallD,
    sync_wall_us_fdatasync: wallF,
  };
}

/** Small timing helpers shared by the benchmark suites. */
import { readFileSync } from 'node:fs';

export interface Rate {
  ops: number;
  seconds: number;
  perSecond: number;
}

/**
 * Runs `fn` (which performs `batch` operations per call) repeatedly for about `seconds`, after a
 * short warm-up, and returns the rate. Time-bounded so a slow path cannot stall the run.
 */
export function measureRate(fn: () => void, batch: number, seconds = 1.5): Rate {
  const warmEnd = performance.now() + 200;
  while (performance.now() < warmEnd) fn();
  let ops = 0;
  const start = performance.now();
  const end = start + seconds * 1000;
  while (performance.now() < end) {
    fn();
    ops += batch;
  }
  const elapsed = (performance.now() - start) / 1000;
  return { ops, seconds: elapsed, perSecond: ops / elapsed };
}

export function fmtRate(perSecond: number): string {
  if (perSecond >= 1e6) return `${(perSecond / 1e6).toFixed(2)} M/s`;
  if (perSecond >= 1e3) return `${(perSecond / 1e3).toFixed(1)} k/s`;
  return `${perSecond.toFixed(1)} /s`;
}

export function ratio(a: number, b: number): string {
  return `${(a / b).toFixed(2)}x`;
}

/** CPU seconds (user + system, all threads) a process has used so far, from /proc. */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

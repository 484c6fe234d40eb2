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

/** Now in Unix nanoseconds (blocks and payloads are dated with it). */
export function nowNs(): bigint {
  return BigInt(Date.now()) * 1_000_000n;
}

/**
 * The middle value; for an even count, the mean of the two middle ones (until 2026-11-30 the upper
 * one alone, which flattered every figure taken over an even count).
 */
export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
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

/** CPU seconds the whole machine has been busy so far, all cores together (/proc/stat). */
function machineBusySeconds(): number {
  const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!;
  // cpu  user nice system idle iowait irq softirq steal ...: idle and iowait are not busy.
  const f = line.trim().split(/\s+/).slice(1).map(Number);
  const busy = f[0]! + f[1]! + f[2]! + f[5]! + f[6]! + f[7]!;
  return busy / 100;
}

/**
 * What the rest of the machine used while a figure was measured: the whole machine's busy time less
 * the measured processes' (`pids`) and this one's (the clients), in cores. A figure is only worth
 * its baseline if this stays near 0: a node's KVM probe, a test run or a build beside the bench
 * once took a core for seconds and made figures look like regressions.
 */
export function othersMeter(pids: number[]): () => number {
  const t0 = performance.now();
  const machine0 = machineBusySeconds();
  const procs0 = pids.map(cpuSeconds);
  const self0 = process.cpuUsage();
  return () => {
    const seconds = (performance.now() - t0) / 1000;
    const procs = pids.reduce((s, pid, i) => s + cpuSeconds(pid) - procs0[i]!, 0);
    const self = process.cpuUsage(self0);
    const others = machineBusySeconds() - machine0 - procs - (self.user + self.system) / 1e6;
    return Math.max(0, others) / seconds;
  };
}

/** A node's JSON answer to a GET (the suites' reads of /node and /ready). */
export async function json<T>(url: string): Promise<T> {
  return (await (await fetch(url)).json()) as T;
}

/** The `/ready` figures the suites poll. */
export interface Readiness {
  unfinalized_positions: number;
  conflicts_open: number;
  finality_advances: number;
}

/**
 * `/ready`, asked again when the connection drops: a node whose thread is held for seconds lets its
 * idle keep-alive connections time out under the client (`-- forks` on the code before its fix).
 */
export async function readiness(url: string): Promise<Readiness> {
  for (let attempt = 1; ; attempt++)
    try {
      return await json<Readiness>(`${url}/ready`);
    } catch (e) {
      if (attempt >= 5) throw e;
    }
}

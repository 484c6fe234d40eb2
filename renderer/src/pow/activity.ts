import { useSyncExternalStore } from 'react';
import type { PowEngine } from './engine.ts';

/**
 * The proof-of-work searches running now, for the progress panel and the status bar: what each is
 * for, attempts against the expected count, and a way to cancel it.
 */
export interface PowJob {
  id: number;
  label: string;
  attempts: bigint;
  expected: number;
  startedAt: number;
  cancel(): void;
}

let jobs: readonly PowJob[] = [];
const listeners = new Set<() => void>();
let nextId = 1;

function emit(): void {
  for (const l of listeners) l();
}

function update(id: number, patch: Partial<PowJob>): void {
  jobs = jobs.map((j) => (j.id === id ? { ...j, ...patch } : j));
  emit();
}

/** Runs a search through `engine`, visible in the progress panel and cancellable from it. */
export async function runPow(
  engine: PowEngine,
  label: string,
  target: Uint8Array,
  difficulty: bigint,
  signal?: AbortSignal,
): Promise<bigint> {
  const ctl = new AbortController();
  const onOuterAbort = () => ctl.abort(signal?.reason);
  signal?.addEventListener('abort', onOuterAbort, { once: true });
  const id = nextId++;
  jobs = [
    ...jobs,
    { id, label, attempts: 0n, expected: 0, startedAt: Date.now(), cancel: () => ctl.abort('cancelled') },
  ];
  emit();
  try {
    return await engine.solve(target, difficulty, {
      signal: ctl.signal,
      onProgress: (p) => update(id, { attempts: p.attempts, expected: p.expected }),
    });
  } finally {
    signal?.removeEventListener('abort', onOuterAbort);
    jobs = jobs.filter((j) => j.id !== id);
    emit();
  }
}

function subscribe(l: () => void): () => void {
  listeners.add(l);
  return () => listeners.delete(l);
}

export function usePowJobs(): readonly PowJob[] {
  return useSyncExternalStore(subscribe, () => jobs);
}

import { describe, expect, it } from 'vitest';
import type { DesktopBridge, PowProgress } from '../../node-core/client/bridge.ts';
import { isPowAbortedError } from '../../node-core/protocol/pow.ts';
import { BridgePowEngine, type PowProgressInfo } from '../../renderer/src/pow/engine.ts';

/** The desktop bridge's proof-of-work engine, against a fake bridge (the real one lives in electron/). */
function fakeBridge() {
  const listeners = new Map<string, (p: PowProgress) => void>();
  const pending = new Map<string, { resolve(n: string): void; reject(e: Error): void }>();
  const calls: { target: string; difficulty: string; jobId: string }[] = [];
  const cancelled: string[] = [];
  const bridge = {
    pow: {
      solve: (target: string, difficulty: string, jobId: string) =>
        new Promise<string>((resolve, reject) => {
          calls.push({ target, difficulty, jobId });
          pending.set(jobId, { resolve, reject });
        }),
      cancel: async (jobId: string) => {
        cancelled.push(jobId);
        const e = new Error('cancelled');
        e.name = 'AbortError';
        pending.get(jobId)?.reject(e);
      },
      onProgress: (jobId: string, l: (p: PowProgress) => void) => {
        listeners.set(jobId, l);
        return () => listeners.delete(jobId);
      },
    },
  } as unknown as DesktopBridge;
  return { bridge, listeners, pending, calls, cancelled };
}

describe('BridgePowEngine', () => {
  it('passes hex target and difficulty, forwards progress, parses the nonce, unsubscribes', async () => {
    const f = fakeBridge();
    const engine = new BridgePowEngine(f.bridge);
    const seen: PowProgressInfo[] = [];
    const p = engine.solve(new Uint8Array(32).fill(0xab), 0xfffff80000000000n, {
      onProgress: (x) => seen.push(x),
    });
    const { jobId, target, difficulty } = f.calls[0]!;
    expect(target).toBe('ab'.repeat(32));
    expect(difficulty).toBe('fffff80000000000');
    f.listeners.get(jobId)!({ attempts: '18446744073709551615', expected: 2097152 });
    f.pending.get(jobId)!.resolve('18446744073709551615');
    await expect(p).resolves.toBe(18446744073709551615n);
    expect(seen).toEqual([{ attempts: 18446744073709551615n, expected: 2097152 }]);
    expect(f.listeners.size).toBe(0);
  });

  it('cancels the job through the bridge when aborted', async () => {
    const f = fakeBridge();
    const engine = new BridgePowEngine(f.bridge);
    const ctl = new AbortController();
    const p = engine.solve(new Uint8Array(32), 0xffffffff00000000n, { signal: ctl.signal });
    ctl.abort();
    const err = await p.catch((e: unknown) => e);
    expect(isPowAbortedError(err)).toBe(true);
    expect(f.cancelled).toEqual([f.calls[0]!.jobId]);
  });
});

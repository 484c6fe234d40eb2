import { afterAll, describe, expect, it } from 'vitest';
import { type PowProcess, PowHost } from '../../electron/pow-host.ts';
import type { FromPowProcess, ToPowProcess } from '../../electron/pow-protocol.ts';
import { PowService } from '../../electron/pow-service.ts';
import type { PowProgress } from '../../node-core/client/bridge.ts';
import { PowSolver } from '../../node-core/fastpath/pow-solver.ts';
import { hexToBytes } from '../../node-core/protocol/hex.ts';
import { expectedAttempts, powValid } from '../../node-core/protocol/pow.ts';

/**
 * Proof of work as the desktop app runs it: PowHost (main process) talking to PowService (the
 * utility process) with the real multi-threaded PowSolver, over an in-memory stand-in for the
 * utility process's message port (structured clone, asynchronous delivery).
 */
const nodeRunsTs = Boolean((process.features as { typescript?: unknown }).typescript);
if (!nodeRunsTs) {
  console.warn(
    `utility-process PoW tests skipped: Node ${process.version} cannot run .ts workers; use npm test`,
  );
}

const MODEST = 'fff0000000000000'; // ~4096 attempts
const UNREACHABLE = 'ffffffff00000000'; // ~4e9 attempts: minutes
const target = (byte: number): string => byte.toString(16).padStart(2, '0').repeat(32);

interface FakeUtility {
  spawned: number;
  killed: number;
  services: PowService[];
  crash(code: number): void;
  received: ToPowProcess[];
}

function harness(solvers: PowSolver[]): { host: PowHost; utility: FakeUtility } {
  const utility: FakeUtility = { spawned: 0, killed: 0, services: [], received: [], crash: () => {} };
  const host = new PowHost((): PowProcess => {
    utility.spawned++;
    let onMessage: (m: unknown) => void = () => {};
    let onExit: (code: number) => void = () => {};
    let alive = true;
    const solver = new PowSolver({ threads: 2, progressIntervalMs: 5 });
    solvers.push(solver);
    const service = new PowService(solver, (m: FromPowProcess) => {
      const copy = structuredClone(m);
      setImmediate(() => alive && onMessage(copy));
    });
    utility.services.push(service);
    utility.crash = (code) => {
      alive = false;
      void service.stop();
      setImmediate(() => onExit(code));
    };
    return {
      post: (m) => {
        utility.received.push(m);
        const copy = structuredClone(m);
        setImmediate(() => alive && service.handle(copy));
      },
      onMessage: (l) => (onMessage = l),
      onExit: (l) => (onExit = l),
      kill: () => {
        utility.killed++;
        alive = false;
        void service.stop();
      },
    };
  });
  return { host, utility };
}

describe.skipIf(!nodeRunsTs)('proof of work in the utility process', () => {
  const solvers: PowSolver[] = [];
  afterAll(async () => {
    await Promise.all(solvers.map((s) => s.stop()));
  });

  it('solves, reports progress with the expected attempts, and the nonce verifies', async () => {
    const { host, utility } = harness(solvers);
    for (let i = 0; i < 3; i++) {
      const progress: PowProgress[] = [];
      const nonce = await host.solve(target(i), MODEST, `job-${i}`, (p) => progress.push(p));
      expect(nonce).toMatch(/^\d+$/);
      expect(powValid(hexToBytes(target(i)), BigInt(nonce), BigInt(`0x${MODEST}`))).toBe(true);
      expect(progress.length).toBeGreaterThan(0);
      expect(progress.at(-1)!.expected).toBe(expectedAttempts(BigInt(`0x${MODEST}`)));
      expect(BigInt(progress.at(-1)!.attempts)).toBeGreaterThan(0n);
    }
    expect(utility.spawned).toBe(1); // started once, kept warm
    expect(host.active).toBe(0);
    await host.stop();
  });

  it('cancels a search at once, frees the cores, and takes the same job id again', async () => {
    const { host, utility } = harness(solvers);
    const solving = host.solve(target(9), UNREACHABLE, 'job-x');
    await new Promise((r) => setTimeout(r, 50));
    const t0 = performance.now();
    await host.cancel('job-x');
    await expect(solving).rejects.toMatchObject({ name: 'AbortError', message: 'proof of work cancelled' });
    expect(performance.now() - t0).toBeLessThan(100);
    const service = utility.services[0]!;
    for (let i = 0; i < 100 && service.active > 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(service.active).toBe(0);
    // Same id right away: the wire uses the host's own ids, so the old job cannot get in the way.
    const nonce = await host.solve(target(9), MODEST, 'job-x');
    expect(powValid(hexToBytes(target(9)), BigInt(nonce), BigInt(`0x${MODEST}`))).toBe(true);
    await host.cancel('job-unknown'); // no-op
    await host.stop();
  });

  it('validates what the renderer sends', async () => {
    const { host, utility } = harness(solvers);
    await expect(host.solve('zz', MODEST, 'j')).rejects.toThrow(TypeError);
    await expect(host.solve(target(1).slice(2), MODEST, 'j')).rejects.toThrow(/64 hex digits/);
    await expect(host.solve(target(1), 'fff', 'j')).rejects.toThrow(/16 hex digits/);
    await expect(host.solve(target(1), MODEST, '')).rejects.toThrow(/job id/);
    await expect(host.solve(target(1), MODEST, 'has space')).rejects.toThrow(/job id/);
    await expect(host.solve(target(1), MODEST, 7 as unknown as string)).rejects.toThrow(/job id/);
    expect(utility.spawned).toBe(0); // nothing reached the utility process
    const first = host.solve(target(2), UNREACHABLE, 'dup');
    await expect(host.solve(target(2), MODEST, 'dup')).rejects.toThrow(/already running/);
    await host.cancel('dup');
    await expect(first).rejects.toMatchObject({ name: 'AbortError' });
    await host.stop();
  });

  it('fails the jobs of a crashed utility process and starts a new one for the next solve', async () => {
    const { host, utility } = harness(solvers);
    const solving = host.solve(target(3), UNREACHABLE, 'job-crash');
    await new Promise((r) => setTimeout(r, 20));
    utility.crash(134);
    await expect(solving).rejects.toThrow(/exited unexpectedly \(code 134\)/);
    const nonce = await host.solve(target(3), MODEST, 'job-after');
    expect(nonce).toMatch(/^\d+$/);
    expect(utility.spawned).toBe(2);
    await host.stop();
  });

  it('cancels the jobs of one window only', async () => {
    const { host } = harness(solvers);
    const a = host.solve(target(4), UNREACHABLE, 'a', undefined, 1);
    const b = host.solve(target(5), MODEST, 'b', undefined, 2);
    host.cancelOwnedBy(1);
    await expect(a).rejects.toMatchObject({ name: 'AbortError' });
    await expect(b).resolves.toMatch(/^\d+$/);
    await host.stop();
  });

  it('stops: pending solves reject, the process is killed, later solves are refused', async () => {
    const { host, utility } = harness(solvers);
    const solving = host.solve(target(6), UNREACHABLE, 'job-stop');
    await host.stop();
    await expect(solving).rejects.toMatchObject({ name: 'AbortError', message: 'the app is quitting' });
    expect(utility.killed).toBe(1);
    await expect(host.solve(target(6), MODEST, 'later')).rejects.toMatchObject({ name: 'AbortError' });
  });
});

describe('the utility process service', () => {
  it('ignores malformed messages and reports bad input as a failure', async () => {
    const posted: FromPowProcess[] = [];
    const solver = {
      start: async () => {},
      solve: async () => ({ nonce: 5n, attempts: 1n, ms: 0 }),
      stop: async () => {},
    };
    const service = new PowService(solver, (m) => posted.push(m));
    for (const junk of [
      null,
      'solve',
      { type: 'solve' },
      { type: 'solve', id: 0, target: '', difficulty: '' },
      { type: 'x', id: 1 },
    ]) {
      service.handle(junk);
    }
    service.handle({ type: 'solve', id: 1, target: 'abc', difficulty: 'ffff' });
    service.handle({ type: 'solve', id: 2, target: '00'.repeat(32), difficulty: 'not hex' });
    service.handle({ type: 'solve', id: 3, target: '00'.repeat(32), difficulty: 'ffff000000000000' });
    await new Promise((r) => setTimeout(r, 10));
    expect(posted.map((m) => [m.id, m.type])).toEqual([
      [1, 'failed'],
      [2, 'failed'],
      [3, 'solved'],
    ]);
    expect(posted[2]).toEqual({ type: 'solved', id: 3, nonce: '5' });
  });
});

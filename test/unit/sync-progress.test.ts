import type { Logger } from 'pino';
import { describe, expect, it } from 'vitest';
import { signBytesNode, verifyBytesNode } from '../../node-core/fastpath/ed25519.ts';
import { PreverifiedSignatures } from '../../node-core/net/preverified.ts';
import { fmtEstimate, type RoundProgress, SyncReporter } from '../../node-core/net/sync-progress.ts';
import { keyPairFromSeed } from '../../node-core/protocol/keys.ts';
import { hexToBytes } from '../../node-core/protocol/hex.ts';
import { catchingUpText } from '../../renderer/src/status/catching-up.ts';

/** Catch-up progress (issue #18): the estimate, the log line, the status bar's words. */

function progress(): RoundProgress {
  return { blocks_known: 0, blocks_left: 0, blocks_done: 0, estimate_seconds: null };
}

/** A logger that keeps its info lines (the reporter only calls info). */
function captureLog() {
  const lines: { obj: Record<string, unknown>; msg: string }[] = [];
  const log = { info: (obj: Record<string, unknown>, msg: string) => lines.push({ obj, msg }) };
  return { lines, log: log as unknown as Logger };
}

describe('SyncReporter', () => {
  it('estimates from the recent rate and says "unknown" before a first page', () => {
    let now = 0;
    const p = progress();
    const r = new SyncReporter(p, 10_000, undefined, () => now);
    expect(p).toMatchObject({ blocks_known: 10_000, blocks_left: 10_000, estimate_seconds: null });
    now = 2_000;
    r.applied(1_000); // 500 blocks/s
    expect(p.blocks_left).toBe(9_000);
    expect(p.estimate_seconds).toBe(18);
    now = 3_000;
    r.applied(1_000); // 2,000 in 3 s
    expect(p.blocks_done).toBe(2_000);
    expect(p.estimate_seconds).toBe(12);
  });

  it('follows a rate change within its window rather than the average since the start', () => {
    let now = 0;
    const p = progress();
    const r = new SyncReporter(p, 100_000, undefined, () => now);
    // Slow for a minute (100 blocks/s), then fast (1,000 blocks/s) for 30 s.
    for (let s = 1; s <= 60; s++) {
      now = s * 1000;
      r.applied(100);
    }
    for (let s = 61; s <= 90; s++) {
      now = s * 1000;
      r.applied(1000);
    }
    const left = 100_000 - 6_000 - 30_000;
    expect(p.blocks_left).toBe(left);
    // Near left / 1000 (the recent rate), far from left / 400 (the average since the start).
    expect(p.estimate_seconds).toBeGreaterThanOrEqual(Math.floor(left / 1000));
    expect(p.estimate_seconds).toBeLessThan(Math.ceil(left / 900));
  });

  it('logs a line with done, left and the estimate every few seconds, and a closing line', () => {
    let now = 0;
    const { lines, log } = captureLog();
    const p = progress();
    const r = new SyncReporter(p, 5_000, log, () => now);
    expect(lines[0]!.msg).toBe('catching up: 5000 blocks to pull');
    for (let s = 1; s <= 12; s++) {
      now = s * 1000;
      r.applied(100);
    }
    const progressLines = lines.filter((l) => l.msg.includes(' of 5000 blocks'));
    expect(progressLines).toHaveLength(2); // at 5 s and at 10 s
    expect(progressLines[0]!.msg).toBe('catching up: 500 of 5000 blocks (10 %), 4500 left, about 45 s left');
    expect(progressLines[0]!.obj).toMatchObject({
      blocks_done: 500,
      blocks_left: 4500,
      estimate_seconds: 45,
    });
    r.done();
    expect(lines.at(-1)!.msg).toMatch(/^caught up: 1200 blocks in 12\.0 s, 3800 not applicable yet$/);
  });

  it('words estimates in seconds, minutes and hours', () => {
    expect(fmtEstimate(null)).toBe('time left unknown');
    expect(fmtEstimate(0)).toBe('about 1 s left');
    expect(fmtEstimate(130)).toBe('about 2 min left');
    expect(fmtEstimate(5400)).toBe('about 1.5 h left');
  });
});

describe("the status bar's catch-up text", () => {
  it('shows percent and estimate only while blocks are left', () => {
    const sync = {
      state: 'syncing',
      blocks_known: 1000,
      blocks_done: 450,
      blocks_left: 550,
      estimate_seconds: 120,
    };
    expect(catchingUpText(sync)).toBe('Catching up: 45 % (about 2 min left)');
    expect(catchingUpText({ ...sync, estimate_seconds: null })).toBe('Catching up: 45 % (time left unknown)');
    // The node's JSON may carry bigints.
    expect(catchingUpText({ ...sync, blocks_known: 1000n, blocks_left: 1n, blocks_done: 999n })).toBe(
      'Catching up: 99 % (about 2 min left)',
    );
    expect(catchingUpText({ ...sync, blocks_left: 0 })).toBeUndefined();
    expect(catchingUpText({ ...sync, state: 'idle' })).toBeUndefined();
    expect(catchingUpText(undefined)).toBeUndefined();
  });
});

describe('PreverifiedSignatures', () => {
  const kp = keyPairFromSeed(new Uint8Array(32).fill(7));
  const seed = hexToBytes(kp.seed_hex);
  const pub = hexToBytes(kp.pub_key);
  const msg = new Uint8Array(138).fill(1);
  const sig = signBytesNode(msg, seed);

  it('passes a recorded triple once, and checks it again afterwards', () => {
    const pre = new PreverifiedSignatures();
    pre.add(sig, msg, pub);
    expect(pre.verify(sig, msg, pub)).toBe(true);
    expect(pre.hits).toBe(1);
    expect(pre.verify(sig, msg, pub)).toBe(true); // verified for real this time
    expect(pre.hits).toBe(1);
  });

  it('never lets a recorded signature pass for another message or key', () => {
    const pre = new PreverifiedSignatures();
    const other = new Uint8Array(138).fill(2);
    pre.add(sig, msg, pub);
    expect(pre.verify(sig, other, pub)).toBe(verifyBytesNode(sig, other, pub));
    expect(pre.verify(sig, other, pub)).toBe(false);
    pre.add(sig, msg, pub);
    const otherKey = hexToBytes(keyPairFromSeed(new Uint8Array(32).fill(8)).pub_key);
    expect(pre.verify(sig, msg, otherKey)).toBe(false);
    expect(pre.hits).toBe(0);
  });
});

import { describe, expect, it } from 'vitest';
import {
  DEFAULT_GOSSIP_HEAVY_WINDOW_MS,
  DEFAULT_GOSSIP_WINDOW_MS,
  FlushPacer,
  gossipWindows,
} from '../../node-core/net/flush-pacer.ts';

/**
 * The gossip batchers' pacing (issue #18): a light stream goes out every turn as before; once a
 * send carried `busyItems` or more, the next waits for the end of the window and carries all
 * gathered meanwhile.
 */
describe('FlushPacer', () => {
  /** A pacer over a queue: each request queues one item; sends are recorded with their times. */
  function paced(windowMs: number, busyItems: number, heavy?: { windowMs: number; items: number }) {
    let queued = 0;
    const sends: { at: number; items: number }[] = [];
    const t0 = performance.now();
    const pacer = new FlushPacer(
      () => {
        const n = queued;
        queued = 0;
        sends.push({ at: performance.now() - t0, items: n });
        return n;
      },
      { windowMs, busyItems, heavyWindowMs: heavy?.windowMs, heavyItems: heavy?.items },
    );
    return {
      sends,
      add(n = 1) {
        queued += n;
        for (let i = 0; i < n; i++) pacer.request();
      },
    };
  }
  const turn = () => new Promise((r) => setImmediate(r));
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  it('a light stream is sent at the end of each turn, never held for the window', async () => {
    const p = paced(200, 8);
    for (let i = 0; i < 5; i++) {
      p.add(2);
      await turn();
      expect(p.sends.length).toBe(i + 1);
    }
    expect(p.sends.map((s) => s.items)).toEqual([2, 2, 2, 2, 2]);
    expect(p.sends.at(-1)!.at).toBeLessThan(150);
  });

  it('after a busy send, what follows waits for the window and goes out together', async () => {
    const p = paced(150, 8);
    p.add(10);
    await turn();
    expect(p.sends.map((s) => s.items)).toEqual([10]);
    // Three more bursts inside the window: none is sent at its turn's end.
    for (let i = 0; i < 3; i++) {
      p.add(4);
      await turn();
    }
    expect(p.sends.length).toBe(1);
    await sleep(200);
    expect(p.sends.map((s) => s.items)).toEqual([10, 12]);
    expect(p.sends[1]!.at - p.sends[0]!.at).toBeGreaterThanOrEqual(145);
    // That send was busy too: a lone item inside its window waits for the window's end.
    p.add(1);
    await turn();
    expect(p.sends.length).toBe(2);
    await sleep(170);
    expect(p.sends.length).toBe(3);
    // ... and once a send was light, the following item goes at its turn's end again.
    p.add(1);
    await turn();
    expect(p.sends.map((s) => s.items)).toEqual([10, 12, 1, 1]);
  });

  it('after a heavy send the next waits for the heavy window; a lighter one goes back to the short window', async () => {
    const p = paced(40, 8, { windowMs: 250, items: 50 });
    p.add(60);
    await turn();
    p.add(10);
    // The short window has passed, the heavy one has not: still held.
    await sleep(120);
    expect(p.sends.map((s) => s.items)).toEqual([60]);
    await sleep(180);
    expect(p.sends.map((s) => s.items)).toEqual([60, 10]);
    expect(p.sends[1]!.at - p.sends[0]!.at).toBeGreaterThanOrEqual(245);
    // That send was busy, not heavy: the next waits for the short window only.
    p.add(1);
    await sleep(100);
    expect(p.sends.map((s) => s.items)).toEqual([60, 10, 1]);
    expect(p.sends[2]!.at - p.sends[1]!.at).toBeLessThan(200);
  });

  it('a heavy window shorter than the window is the window', async () => {
    const p = paced(150, 8, { windowMs: 10, items: 8 });
    p.add(20);
    await turn();
    p.add(1);
    await sleep(60);
    expect(p.sends.length).toBe(1);
    await sleep(140);
    expect(p.sends.map((s) => s.items)).toEqual([20, 1]);
  });

  it('a window of 0 sends every turn, however busy', async () => {
    const p = paced(0, 1);
    for (let i = 0; i < 3; i++) {
      p.add(20);
      await turn();
    }
    expect(p.sends.map((s) => s.items)).toEqual([20, 20, 20]);
  });

  it("the node's windows: defaults where unset, a window of 0 turns the heavy one off unless set", () => {
    expect(gossipWindows(undefined, undefined)).toEqual({
      gossipWindowMs: DEFAULT_GOSSIP_WINDOW_MS,
      gossipHeavyWindowMs: DEFAULT_GOSSIP_HEAVY_WINDOW_MS,
    });
    expect(DEFAULT_GOSSIP_HEAVY_WINDOW_MS).toBeGreaterThan(DEFAULT_GOSSIP_WINDOW_MS);
    expect(gossipWindows(0, undefined)).toEqual({ gossipWindowMs: 0, gossipHeavyWindowMs: 0 });
    expect(gossipWindows(0, 30)).toEqual({ gossipWindowMs: 0, gossipHeavyWindowMs: 30 });
    expect(gossipWindows(25, undefined)).toEqual({
      gossipWindowMs: 25,
      gossipHeavyWindowMs: DEFAULT_GOSSIP_HEAVY_WINDOW_MS,
    });
  });
});

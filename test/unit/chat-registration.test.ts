import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  keepRegistered,
  REGISTER_EVERY_MS,
  REGISTER_RETRY_MS,
} from '../../renderer/src/chat/registration.ts';

/** The window keeps its accounts in the directory: renewed before the 30-minute TTL, retried soon. */
describe('chat registration schedule', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('registers at once, then every 20 minutes, inside the 30-minute TTL', async () => {
    const calls: number[] = [];
    const stop = keepRegistered(async () => void calls.push(Date.now()));
    await vi.advanceTimersByTimeAsync(0);
    expect(calls).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(REGISTER_EVERY_MS - 1);
    expect(calls).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(calls).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(2 * REGISTER_EVERY_MS);
    expect(calls).toHaveLength(4);
    const gaps = calls.slice(1).map((t, i) => t - calls[i]!);
    for (const g of gaps) expect(g).toBeLessThan(30 * 60_000);
    stop();
    await vi.advanceTimersByTimeAsync(REGISTER_EVERY_MS * 3);
    expect(calls).toHaveLength(4);
  });

  it('tries again after 30 s when a registration fails, then goes back to the 20-minute rhythm', async () => {
    let fail = 2;
    const calls: number[] = [];
    const stop = keepRegistered(async () => {
      calls.push(Date.now());
      if (fail-- > 0) throw new Error('node away');
    });
    await vi.advanceTimersByTimeAsync(0);
    await vi.advanceTimersByTimeAsync(REGISTER_RETRY_MS);
    await vi.advanceTimersByTimeAsync(REGISTER_RETRY_MS);
    expect(calls).toHaveLength(3);
    await vi.advanceTimersByTimeAsync(REGISTER_RETRY_MS);
    expect(calls).toHaveLength(3);
    await vi.advanceTimersByTimeAsync(REGISTER_EVERY_MS);
    expect(calls).toHaveLength(4);
    stop();
  });
});

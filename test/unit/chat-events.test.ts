import { describe, expect, it } from 'vitest';
import type { ChatEvent, ChatMessage } from '../../node-core/client/chat.ts';
import {
  followStream,
  nextDelay,
  RETRY_FIRST_MS,
  RETRY_MAX_MS,
  STABLE_MS,
} from '../../renderer/src/chat/events.ts';
import type { StreamStatus } from '../../renderer/src/chat/link.ts';

/**
 * Following an account's event stream by hand (each connect needs a fresh proof): resume after the
 * last id seen, back off while the node is away, reconnect at once after an overflow, say why.
 */
const message = (id: string): ChatEvent => ({
  kind: 'message',
  id,
  message: { id: id.padStart(64, '0'), from: 'a', to: 'b', message: id, timestamp: 1n } as ChatMessage,
});

type Step = (onOpen: () => void, onEvent: (e: ChatEvent) => void) => Promise<void> | void;

/** Runs followStream over scripted connections; stops after the last one. */
async function run(steps: Step[], livedMs: number[] = []) {
  const ctl = new AbortController();
  const resumes: string[] = [];
  const sleeps: number[] = [];
  const statuses: StreamStatus[] = [];
  const seen: string[] = [];
  let clock = 0;
  let i = 0;
  await followStream(
    {
      async connect(last, onOpen, onEvent) {
        resumes.push(last);
        const step = steps[i];
        clock += livedMs[i] ?? 0;
        i += 1;
        if (!step) {
          ctl.abort();
          throw new Error('aborted');
        }
        await step(onOpen, onEvent);
      },
      onEvent: (e) => seen.push(e.kind === 'message' ? e.id : e.kind),
      onStatus: (s) => statuses.push(s),
      describe: (e) => (e instanceof Error ? e.message : String(e)),
      sleep: async (ms) => void sleeps.push(ms),
      now: () => clock,
    },
    ctl.signal,
  );
  return { resumes, sleeps, statuses, seen };
}

describe('chat event stream', () => {
  it('backs off from 1 s, doubling up to 30 s; a stream that lived a while starts again at 1 s', () => {
    expect(nextDelay(0, 0, false)).toBe(RETRY_FIRST_MS);
    expect(nextDelay(1_000, 0, false)).toBe(2_000);
    expect(nextDelay(16_000, 0, false)).toBe(RETRY_MAX_MS);
    expect(nextDelay(RETRY_MAX_MS, 0, false)).toBe(RETRY_MAX_MS);
    expect(nextDelay(RETRY_MAX_MS, STABLE_MS, false)).toBe(RETRY_FIRST_MS);
    expect(nextDelay(RETRY_MAX_MS, 0, true)).toBe(0);
  });

  it('resumes after the last message id on every reconnect, from 0 the first time', async () => {
    const r = await run([
      (open, ev) => {
        open();
        ev(message('1'));
        ev(message('2'));
        // A delivery frame has no id: the resume point stays.
        ev({
          kind: 'delivery',
          id: 'x',
          from: 'a',
          to: 'b',
          delivery: { state: 'delivered', attempts: 1, updated_at: 1n },
        });
      },
      () => {
        throw new TypeError('fetch failed');
      },
      (open, ev) => {
        open();
        ev(message('3'));
      },
    ]);
    expect(r.resumes).toEqual(['0', '2', '2', '3']);
    expect(r.seen).toEqual(['1', '2', 'delivery', '3']);
  });

  it('says why it is down and when it tries again, and clears that once live', async () => {
    const fail = () => {
      throw new TypeError('cannot reach the node');
    };
    const r = await run([fail, fail, fail, (open) => open()]);
    expect(r.sleeps.slice(0, 3)).toEqual([1_000, 2_000, 4_000]);
    const retrying = r.statuses.filter((s) => s.state === 'retrying');
    expect(retrying[0]).toEqual({ state: 'retrying', error: 'cannot reach the node', retryAt: 1_000 });
    // Connecting again after a failure still says what failed; the first connect says nothing.
    expect(r.statuses[0]).toEqual({ state: 'connecting' });
    expect(r.statuses[2]).toEqual({ state: 'connecting', error: 'cannot reach the node' });
    const live = r.statuses.findIndex((s) => s.state === 'live');
    expect(live).toBeGreaterThan(0);
    // After being live, the node ending the stream is a new reason.
    expect(r.statuses[live + 1]).toMatchObject({
      state: 'retrying',
      error: 'the node closed the event stream',
    });
  });

  it('reconnects at once after an overflow, resuming where it was', async () => {
    const r = await run([
      (open, ev) => {
        open();
        ev(message('7'));
        ev({ kind: 'overflow' });
      },
      (open, ev) => {
        open();
        ev(message('8'));
      },
    ]);
    expect(r.sleeps[0]).toBe(0);
    expect(r.resumes.slice(0, 2)).toEqual(['0', '7']);
    expect(r.statuses.filter((s) => s.state === 'retrying')).toHaveLength(1); // only after the last
  });

  it('a healthy stream that ends reconnects after 1 s, however long the earlier backoff was', async () => {
    const fail = () => {
      throw new Error('down');
    };
    const r = await run([fail, fail, fail, (open) => open()], [0, 0, 0, STABLE_MS + 5]);
    expect(r.sleeps).toEqual([1_000, 2_000, 4_000, 1_000]);
  });

  it('stops when aborted, without another status', async () => {
    const ctl = new AbortController();
    const statuses: StreamStatus[] = [];
    let connects = 0;
    await followStream(
      {
        async connect(_last, onOpen) {
          connects += 1;
          onOpen();
          ctl.abort();
          throw new DOMException('aborted', 'AbortError');
        },
        onEvent: () => {},
        onStatus: (s) => statuses.push(s),
        describe: String,
      },
      ctl.signal,
    );
    expect(connects).toBe(1);
    expect(statuses.map((s) => s.state)).toEqual(['connecting', 'live']);
  });
});

import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiRequestError } from '../../node-core/client/client.ts';
import { PowAbortedError } from '../../node-core/protocol/pow.ts';
import {
  currentActions,
  dismissAction,
  resetActions,
  startAction,
  watchAction,
} from '../../renderer/src/activity/actions.ts';
import { currentToasts, dismissToast, holdToast, toast } from '../../renderer/src/activity/toasts.ts';
import { findByName, resolveName } from '../../renderer/src/wallet/names.ts';

/** The running-actions store and the toasts: how an action ends is always told, once, somewhere. */
function clearToasts(): void {
  for (const t of currentToasts()) dismissToast(t.id);
}

beforeEach(() => {
  resetActions();
  clearToasts();
});

afterEach(() => {
  vi.useRealTimers();
});

function send(run: () => Promise<{ hash: string }>) {
  return startAction({
    kind: 'send',
    account: 'aa'.repeat(32),
    title: 'Send 5 XE to Savings',
    input: { amount: 5_000_000n },
    run,
    describe: (b) => ({ text: 'Sent 5 XE to Savings.', blockHash: b.hash }),
    cancelled: 'cancelled, nothing was sent.',
  });
}

describe('actions', () => {
  it('runs on its own and, with no page watching, ends in a toast linking to the block', async () => {
    let finish!: (v: { hash: string }) => void;
    const a = send(() => new Promise((r) => (finish = r)));
    expect(currentActions()[0]).toMatchObject({ id: a.id, state: 'running', kind: 'send' });
    expect(currentToasts()).toEqual([]);
    finish({ hash: 'ab'.repeat(32) });
    const ended = await a.done;
    expect(ended).toMatchObject({
      state: 'done',
      outcome: 'Sent 5 XE to Savings.',
      blockHash: 'ab'.repeat(32),
    });
    expect(currentToasts()).toMatchObject([
      {
        tone: 'ok',
        text: 'Sent 5 XE to Savings.',
        link: { label: 'View block', href: `#/explorer/block/${'ab'.repeat(32)}` },
      },
    ]);
  });

  it('a page that watches it shows the end itself: no toast', async () => {
    let finish!: (v: { hash: string }) => void;
    const a = send(() => new Promise((r) => (finish = r)));
    const stop = watchAction(a.id);
    finish({ hash: 'cd'.repeat(32) });
    expect((await a.done).state).toBe('done');
    expect(currentToasts()).toEqual([]);
    stop();
  });

  it('a page that went away before the end no longer counts as watching', async () => {
    let finish!: (v: { hash: string }) => void;
    const a = send(() => new Promise((r) => (finish = r)));
    const stop = watchAction(a.id);
    stop();
    stop(); // a second stop changes nothing
    finish({ hash: 'cd'.repeat(32) });
    await a.done;
    expect(currentToasts()).toHaveLength(1);
  });

  it('a failure keeps the node’s words; a cancelled proof of work says nothing was sent', async () => {
    const failed = await send(() =>
      Promise.reject(
        new ApiRequestError(400, { error: 'fork: previous is not the frontier' }, 'POST', '/blocks/send'),
      ),
    ).done;
    expect(failed.state).toBe('failed');
    expect(failed.outcome).toMatch(/fork: previous is not the frontier/);
    const cancelled = await send(() => Promise.reject(new PowAbortedError())).done;
    expect(cancelled).toMatchObject({ state: 'cancelled', outcome: 'cancelled, nothing was sent.' });
    expect(currentToasts().map((t) => [t.tone, t.text])).toEqual([
      ['error', `Send 5 XE to Savings failed: ${failed.outcome}`],
      ['info', 'Send 5 XE to Savings: cancelled, nothing was sent.'],
    ]);
  });

  it('keeps the newest 20 ended actions, never drops a running one, and dismissing only hides it from its page', async () => {
    const forever = send(() => new Promise(() => {}));
    for (let i = 0; i < 25; i++) await send(async () => ({ hash: 'ef'.repeat(32) })).done;
    const list = currentActions();
    expect(list).toHaveLength(21);
    expect(list.some((e) => e.id === forever.id && e.state === 'running')).toBe(true);
    dismissAction(list[0]!.id);
    expect(currentActions()[0]!.dismissed).toBe(true);
    expect(currentActions()).toHaveLength(21);
  });
});

describe('toasts', () => {
  it('leave after their time, stay while held, and at most 4 show', () => {
    vi.useFakeTimers();
    const first = toast({ tone: 'info', text: 'one' });
    vi.advanceTimersByTime(5999);
    expect(currentToasts().map((t) => t.text)).toEqual(['one']);
    holdToast(first, true);
    vi.advanceTimersByTime(60_000);
    expect(currentToasts().map((t) => t.text)).toEqual(['one']);
    holdToast(first, false);
    vi.advanceTimersByTime(6000);
    expect(currentToasts()).toEqual([]);
    for (const t of ['a', 'b', 'c', 'd', 'e']) toast({ tone: 'ok', text: t });
    expect(currentToasts().map((t) => t.text)).toEqual(['b', 'c', 'd', 'e']);
    const sticky = toast({ tone: 'error', text: 'stays', timeoutMs: 0 });
    vi.advanceTimersByTime(3_600_000);
    expect(currentToasts().map((t) => t.id)).toEqual([sticky]);
  });
});

describe('names', () => {
  const own = [{ address: 'aa'.repeat(32), label: 'Savings' }];
  const book = [
    { name: 'Old name for savings', address: 'aa'.repeat(32) },
    { name: 'Friend', address: 'bb'.repeat(32) },
  ];
  it('an own account by its label first, then the address book, else nothing', () => {
    expect(resolveName('aa'.repeat(32), own, book)).toEqual({ name: 'Savings', kind: 'own' });
    expect(resolveName('bb'.repeat(32), own, book)).toEqual({ name: 'Friend', kind: 'contact' });
    expect(resolveName('cc'.repeat(32), own, book)).toBeUndefined();
    expect(resolveName(undefined, own, book)).toBeUndefined();
  });

  it('finds addresses by name: exact names first (case and accents aside), else every name that contains it', () => {
    const more = [
      ...book,
      { name: 'Café', address: 'dd'.repeat(32) },
      { name: 'Cafeteria', address: 'ee'.repeat(32) },
    ];
    expect(findByName('savings', own, more)).toEqual([
      { address: 'aa'.repeat(32), name: 'Savings', kind: 'own' },
    ]);
    expect(findByName('  cafe ', own, more).map((n) => n.name)).toEqual(['Café']);
    expect(findByName('caf', own, more).map((n) => n.name)).toEqual(['Café', 'Cafeteria']);
    // The own account is not found again under the address book's old name for it.
    expect(findByName('old name', own, more)).toEqual([]);
    expect(findByName('', own, more)).toEqual([]);
  });
});

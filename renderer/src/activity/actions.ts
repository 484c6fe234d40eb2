import { useEffect, useState, useSyncExternalStore } from 'react';
import { isPowAbortedError } from '../../../node-core/protocol/pow.ts';
import { errorMessage } from '../api.ts';
import { toast } from './toasts.ts';

/**
 * The person's recent writes (send, test funds, receive) with their state. An action runs in this
 * module, not in the page that started it: leaving the Send page during the proof of work neither
 * cancels nor loses the send. Its end is told where the person is: the page that started it shows it
 * when still open (it "watches" the action); otherwise a toast does. The activity list shows them all.
 */
export type ActionKind = 'send' | 'claim' | 'receive';
export type ActionState = 'running' | 'done' | 'failed' | 'cancelled';

export interface ActionEntry<I = unknown, R = unknown> {
  id: number;
  kind: ActionKind;
  /** The account that writes. */
  account: string;
  /** What it does, in words: "Send 250.5 XE to Savings". */
  title: string;
  state: ActionState;
  /** Unix milliseconds. */
  startedAt: number;
  finishedAt?: number;
  /** What was asked (the checked send), so a page coming back can show it again. */
  input: I;
  result?: R;
  error?: unknown;
  /** How it ended, in words: "Sent 250.5 XE to Savings." or the error's text. */
  outcome?: string;
  /** The block it wrote, when there is one. */
  blockHash?: string;
  /** The person closed its result (Send another): the page forgets it, the list keeps it. */
  dismissed: boolean;
}

export interface StartAction<I, R> {
  kind: ActionKind;
  account: string;
  title: string;
  input: I;
  run(): Promise<R>;
  /** The outcome of a success in words, and the block it wrote. */
  describe(result: R): { text: string; blockHash?: string };
  /** Words for a cancel ("Cancelled: nothing was sent."). */
  cancelled?: string;
}

const KEPT = 20;
let entries: readonly ActionEntry[] = [];
let nextId = 1;
const listeners = new Set<() => void>();
const watchers = new Map<number, number>();
// Ended actions whose result a page has shown: the next visit starts afresh.
const shown = new Set<number>();

function emit(): void {
  for (const l of listeners) l();
}

function patch(id: number, p: Partial<ActionEntry>): void {
  entries = entries.map((e) => (e.id === id ? { ...e, ...p } : e));
  emit();
}

/** Starts an action; resolves with its entry once it has ended (it never rejects). */
export function startAction<I, R>(a: StartAction<I, R>): { id: number; done: Promise<ActionEntry<I, R>> } {
  const id = nextId++;
  const entry: ActionEntry<I, R> = {
    id,
    kind: a.kind,
    account: a.account,
    title: a.title,
    state: 'running',
    startedAt: Date.now(),
    input: a.input,
    dismissed: false,
  };
  // Newest first; ended ones beyond KEPT drop off, running ones never do.
  const older = entries.filter((e, i) => e.state === 'running' || i < KEPT - 1);
  entries = [entry as ActionEntry, ...older];
  emit();
  const done = (async (): Promise<ActionEntry<I, R>> => {
    try {
      const result = await a.run();
      const d = a.describe(result);
      patch(id, { state: 'done', result, outcome: d.text, blockHash: d.blockHash, finishedAt: Date.now() });
    } catch (error) {
      const cancelled = isPowAbortedError(error);
      patch(id, {
        state: cancelled ? 'cancelled' : 'failed',
        error,
        outcome: cancelled ? (a.cancelled ?? 'Cancelled.') : errorMessage(error),
        finishedAt: Date.now(),
      });
    }
    const ended = entries.find((e) => e.id === id)! as ActionEntry<I, R>;
    if (!watchers.get(id)) announce(ended);
    return ended;
  })();
  return { id, done };
}

/** The toast for an action that ended while no page showed it. */
function announce(e: ActionEntry): void {
  if (e.state === 'done') {
    toast({
      tone: 'ok',
      text: e.outcome ?? `${e.title}: done.`,
      ...(e.blockHash ? { link: { label: 'View block', href: `#/explorer/block/${e.blockHash}` } } : {}),
    });
  } else if (e.state === 'cancelled') toast({ tone: 'info', text: `${e.title}: ${e.outcome}` });
  else toast({ tone: 'error', text: `${e.title} failed: ${e.outcome}` });
}

export function dismissAction(id: number): void {
  patch(id, { dismissed: true });
}

/** Says that a page shows this action's end itself (no toast then); returns the way to stop. */
export function watchAction(id: number): () => void {
  watchers.set(id, (watchers.get(id) ?? 0) + 1);
  let stopped = false;
  return () => {
    if (stopped) return;
    stopped = true;
    const n = (watchers.get(id) ?? 1) - 1;
    if (n <= 0) watchers.delete(id);
    else watchers.set(id, n);
  };
}

/** While the calling component is mounted, it shows this action's end itself: no toast then. */
export function useWatchAction(id: number | undefined): void {
  useEffect(() => (id === undefined ? undefined : watchAction(id)), [id]);
}

/** The recent actions, newest first (outside React). */
export function currentActions(): readonly ActionEntry[] {
  return entries;
}

function subscribe(l: () => void): () => void {
  listeners.add(l);
  return () => listeners.delete(l);
}

export function useActions(): readonly ActionEntry[] {
  return useSyncExternalStore(subscribe, () => entries);
}

/**
 * The newest action of this kind for this account for its page to show: running, or ended and not
 * yet seen there. Once a page has shown how it ended, coming back to the page starts afresh (the
 * activity list keeps it); an action that ended while the person was away is shown on the first
 * visit after.
 */
export function useLatestAction<I = unknown, R = unknown>(
  kind: ActionKind,
  account: string,
): ActionEntry<I, R> | undefined {
  const list = useActions();
  const e = list.find((x) => x.kind === kind && x.account === account);
  // Decided once per visit (mount): an ended result shown on an earlier visit stays hidden.
  const [hidden] = useState(() => (e && e.state !== 'running' && shown.has(e.id) ? e.id : undefined));
  const current = e && !e.dismissed && e.id !== hidden ? (e as ActionEntry<I, R>) : undefined;
  const endedId = current && current.state !== 'running' ? current.id : undefined;
  useEffect(() => {
    if (endedId !== undefined) shown.add(endedId);
  }, [endedId]);
  return current;
}

/** Tests: forget everything. */
export function resetActions(): void {
  entries = [];
  watchers.clear();
  shown.clear();
  emit();
}

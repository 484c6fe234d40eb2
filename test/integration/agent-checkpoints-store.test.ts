import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { chatArea, leaseHoldsArea } from '../../node-core/agent/areas.ts';
import {
  type CheckpointArea,
  CheckpointNotFoundError,
  Checkpoints,
} from '../../node-core/agent/checkpoints.ts';
import { ChatStore } from '../../node-core/chat/chat-store.ts';
import { generateKeyPair } from '../../node-core/protocol/keys.ts';
import { Store } from '../../node-core/store/store.ts';
import { chatEnvelope } from '../helpers/chat-kit.ts';
import { tempDir } from '../helpers/node.ts';

/**
 * Agent checkpoints over a real store, without a node (agent/checkpoints.ts): the lease holds area
 * rewrites its database and has the running holds read it again; chat delivery records come back as
 * they were; at most `maxKept` checkpoints are kept, oldest dropped, never the one rolled back to;
 * a failing area leaves nothing half done.
 */
describe('agent checkpoints over a store', () => {
  let dir: string;
  let store: Store;
  let chat: ChatStore;
  let clock = 1_000n;
  const now = () => (clock += 1n);
  let reloads = 0;
  const a = generateKeyPair();
  const b = generateKeyPair();

  const book = (areas: CheckpointArea[], maxKept?: number) =>
    new Checkpoints({
      db: store.agentCheckpoints,
      transaction: (fn) => store.transaction(fn),
      now,
      areas,
      maxKept,
    });

  beforeEach(() => {
    dir = tempDir('checkpoints-store-');
    store = Store.open({ path: join(dir, 'store.lmdb') });
    chat = new ChatStore({
      messages: store.chatMessages,
      index: store.chatIndex,
      seqs: store.chatSeq,
      deliveries: store.chatDelivery,
      transaction: (fn) => store.transaction(fn),
    });
    reloads = 0;
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const holds = () => leaseHoldsArea(store.leaseHolds, () => (reloads += 1));
  const put = (k: string, v: string) => store.transaction(() => store.leaseHolds.putSync(k, v));

  it('lease holds: diff by lease hash, rollback rewrites the database and reloads', async () => {
    const h1 = 'a'.repeat(64);
    const h2 = 'b'.repeat(64);
    await put(h1, '{"enabled":true,"segment_secs":60}');
    const cps = book([holds()]);
    const cp = await cps.create('one hold');
    expect(cp.counts).toEqual({ lease_holds: 1 });
    await put(h1, '{"enabled":false,"segment_secs":60,"warning":"hold stopped: the lease has ended"}');
    await put(h2, '{"enabled":true,"segment_secs":120}');
    const { diff } = cps.diff(cp.id);
    expect(diff.lease_holds).toEqual({
      added: [{ key: h2, value: { enabled: true, segment_secs: 120 } }],
      removed: [],
      changed: [
        {
          key: h1,
          from: { enabled: true, segment_secs: 60 },
          to: { enabled: false, segment_secs: 60, warning: 'hold stopped: the lease has ended' },
        },
      ],
    });
    const dry = await cps.rollback(cp.id, { dryRun: true });
    expect(dry.applied).toBe(false);
    expect(reloads).toBe(0);
    expect(store.leaseHolds.get(h2)).toBeDefined();
    const r = await cps.rollback(cp.id, { dryRun: false });
    expect(r.diff.lease_holds!.removed.map((e) => e.key)).toEqual([h2]);
    expect(reloads).toBe(1);
    expect(store.leaseHolds.get(h2)).toBeUndefined();
    expect(store.leaseHolds.get(h1)).toBe('{"enabled":true,"segment_secs":60}');
    // The undo brings both back.
    await cps.rollback(r.undo_checkpoint!.id, { dryRun: false });
    expect(store.leaseHolds.get(h2)).toBe('{"enabled":true,"segment_secs":120}');
    expect(reloads).toBe(2);
  });

  it('chat: removed messages come back with their delivery records and a new sequence number', async () => {
    const area = chatArea(chat);
    const cps = book([area]);
    const env = chatEnvelope(a, b, 'kept', { difficulty: 0n });
    const m = await chat.put(env, 5n, { state: 'pending', attempts: 0, updated_at: 5n });
    expect(m).not.toBe(false);
    const cp = await cps.create('one');
    await chat.setDelivery((m as { id: string }).id, { state: 'delivered', attempts: 1, updated_at: 6n });
    const later = await chat.put(chatEnvelope(b, a, 'later', { difficulty: 0n }), 7n);
    expect(cps.diff(cp.id).diff.chat!.changed.map((c) => [c.from, c.to])).toEqual([
      [expect.objectContaining({ delivery: 'pending' }), expect.objectContaining({ delivery: 'delivered' })],
    ]);
    await cps.rollback(cp.id, { dryRun: false });
    const id = (m as { id: string }).id;
    expect(chat.delivery(id)?.state).toBe('pending');
    expect(chat.has((later as { id: string }).id)).toBe(false);
    expect(chat.list(a.pub_key).messages.map((x) => x.message)).toEqual(['kept']);
    // A message gone and put back: a sequence number never handed out before.
    const lastBefore = chat.lastSeq();
    await chat.restore(new Map());
    expect(chat.has(id)).toBe(false);
    await cps.rollback(cp.id, { dryRun: false });
    expect(chat.get(id)!.seq).toBe(lastBefore + 1n);
    expect(chat.after(lastBefore).map((x) => x.id)).toEqual([id]);
  });

  it(`keeps at most maxKept checkpoints, oldest dropped, never the one rolled back to`, async () => {
    const cps = book([holds()], 3);
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push((await cps.create(`c${i}`)).id);
    expect(cps.list().map((c) => c.name)).toEqual(['c3', 'c2', 'c1']);
    expect(() => cps.diff(ids[0]!)).toThrow(CheckpointNotFoundError);
    // Rolling back to the oldest kept: its undo pushes out the next oldest instead.
    const r = await cps.rollback(ids[1]!, { dryRun: false });
    expect(cps.list().map((c) => c.id)).toEqual([r.undo_checkpoint!.id, ids[3], ids[1]]);
  });

  it('a failing area leaves nothing half done, and no undo checkpoint', async () => {
    const h1 = 'c'.repeat(64);
    const failing: CheckpointArea = {
      name: 'failing',
      noun: ['thing', 'things'],
      capture: () => new Map([['k', 'v']]),
      summarize: (_k, v) => v,
      restore() {
        throw new Error('cannot restore');
      },
    };
    const cps = book([holds(), failing]);
    const cp = await cps.create('before');
    await put(h1, '{"enabled":true,"segment_secs":60}');
    await expect(cps.rollback(cp.id, { dryRun: false })).rejects.toThrow('cannot restore');
    expect(store.leaseHolds.get(h1)).toBeDefined();
    expect(reloads).toBe(0);
    expect(cps.list().map((c) => c.id)).toEqual([cp.id]);
  });
});

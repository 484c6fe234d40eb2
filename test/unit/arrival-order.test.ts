import { describe, expect, it } from 'vitest';
import { ArrivalOrder } from '../../node-core/net/arrival-order.ts';

/** Gossiped blocks are handed to the ledger after the blocks they build on that arrived before them. */
describe('arrival order of gossiped blocks', () => {
  const turns = () => new Promise((r) => setImmediate(r));

  it('holds a block until the blocks it builds on are handed over, in any order of their checks', async () => {
    const order = new ArrivalOrder();
    const events: string[] = [];
    const handOverPrevious = order.arrive('previous');
    const handOverSource = order.arrive('source');
    const handOverChild = order.arrive('child');
    // The child's checks finish first (the verify pool answered its batch first).
    const child = order.after(['previous', 'source']).then(() => {
      events.push('child submitted');
      handOverChild();
    });
    await turns();
    expect(events).toEqual([]);
    events.push('previous submitted');
    handOverPrevious();
    await turns();
    expect(events).toEqual(['previous submitted']); // the source is still being checked
    events.push('source submitted');
    handOverSource();
    await child;
    expect(events).toEqual(['previous submitted', 'source submitted', 'child submitted']);
    expect(order.size).toBe(0);
  });

  it('does not hold a block for what is not here, nor for a refused one', async () => {
    const order = new ArrivalOrder();
    let done = false;
    await order.after(['never-arrived', undefined]).then(() => (done = true));
    expect(done).toBe(true);
    // A previous refused by its checks is handed over too (on the error path): the child goes on.
    const refused = order.arrive('refused');
    const waiting = order.after(['refused']);
    refused();
    await expect(waiting).resolves.toBeUndefined();
  });

  it('keeps the first arrival of a block when a copy arrives meanwhile', async () => {
    const order = new ArrivalOrder();
    const first = order.arrive('b');
    const copy = order.arrive('b');
    let released = false;
    const waiting = order.after(['b']).then(() => (released = true));
    copy(); // the copy was refused (a duplicate): the first one is still being checked
    await turns();
    expect(released).toBe(false);
    expect(order.size).toBe(1);
    first();
    await waiting;
    expect(released).toBe(true);
    expect(order.size).toBe(0);
  });
});

import { describe, expect, it } from 'vitest';
import { DueQueue } from '../../node-core/chat/due-queue.ts';
import { rng } from '../helpers/rng.ts';

/**
 * The chat outbox's queue of due times (chat/due-queue.ts) against the same rule written out over
 * a plain map: the earliest id first, an id's later time replacing its earlier one, removed ids
 * never coming back, through thousands of random changes (and the rebuilds they cause).
 */
describe('due queue', () => {
  for (const seed of [1, 2, 3])
    it(`takes what a walk over every id would (seed ${seed})`, () => {
      const random = rng(seed);
      const q = new DueQueue();
      const ref = new Map<string, number>();
      /** Ids taken and not yet set again or removed: due, but no longer in the heap. */
      const taken = new Set<string>();
      const earliest = () => {
        let best: { id: string; at: number } | undefined;
        for (const [id, at] of ref)
          if (!taken.has(id) && (best === undefined || at < best.at)) best = { id, at };
        return best;
      };
      let takes = 0;
      for (let step = 0; step < 5_000; step++) {
        const r = random();
        const id = `m${Math.floor(random() * 60)}`;
        if (r < 0.5) {
          const at = Math.floor(random() * 1_000);
          q.set(id, at);
          ref.set(id, at);
          taken.delete(id);
        } else if (r < 0.7) {
          q.delete(id);
          ref.delete(id);
          taken.delete(id);
        } else {
          const want = earliest();
          const got = q.take();
          expect(got?.at).toBe(want?.at);
          if (got) {
            // Ties may come out in either order: the id taken is one due at that time.
            expect(ref.get(got.id)).toBe(got.at);
            expect(taken.has(got.id)).toBe(false);
            taken.add(got.id);
            takes += 1;
          }
        }
        expect(q.size).toBe(ref.size);
        expect(q.peek()?.at).toBe(earliest()?.at);
      }
      expect(takes).toBeGreaterThan(1_000);
    });
});

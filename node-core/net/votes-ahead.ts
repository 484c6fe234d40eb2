/**
 * Gossiped votes being counted, so that a block arriving after them is applied once they are
 * counted (issue #18). A node sends a window's votes ahead of the blocks they are for (one pacer,
 * net/host.ts), so that a receiver finalizes those blocks in the write that applies them. Counting
 * runs in slices with turns of the event loop between (net/vote-intake.ts), and on a loaded machine
 * the blocks' own checks came back between two slices: applied before their votes were counted,
 * a receiver finalized them in a second write (in the two-node window test under four busy
 * processes, 107-165 of 176 blocks final on apply instead of all).
 */
export class VotesAhead {
  private readonly counting = new Set<Promise<void>>();
  /** Promise.all of `counting` as it stands, shared by every block that arrives until it changes. */
  private all: Promise<unknown> | undefined;

  /** Records a batch's counting; returns it unchanged (its caller still gets its outcome). */
  track<T>(counted: Promise<T>): Promise<T> {
    const done = counted.then(
      () => {},
      () => {},
    );
    this.counting.add(done);
    this.all = undefined;
    void done.then(() => {
      this.counting.delete(done);
      this.all = undefined;
    });
    return counted;
  }

  /** Resolves once every batch being counted now is counted (or failed); undefined when none is. */
  now(): Promise<unknown> | undefined {
    if (this.counting.size === 0) return undefined;
    return (this.all ??= Promise.all(this.counting));
  }
}

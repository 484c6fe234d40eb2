/**
 * `work`'s result and the turns of the event loop that ran while it settled: more than none means
 * other work got in between (work done in slices, not in one go).
 */
export async function turnsDuring<T>(work: () => Promise<T>): Promise<{ result: T; turns: number }> {
  let turns = 0;
  let counting = true;
  const spin = () => {
    if (!counting) return;
    turns += 1;
    setImmediate(spin);
  };
  setImmediate(spin);
  const result = await work();
  counting = false;
  return { result, turns };
}

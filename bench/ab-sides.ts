/**
 * The two sides of an A/B bench (ab.ts: two nodes at ingest; gossip-ab.ts: two networks of three):
 * A is this checkout, B is `BENCH_AB_BIN` or this checkout too, each with its own V8 flags
 * (`BENCH_AB_FLAGS_A`/`_B`, instead of the command's) and command-line options (`BENCH_AB_ARGS_A`/`_B`).
 */

export type Side = 'A' | 'B';

const words = (v: string | undefined) => v?.split(' ').filter(Boolean);

/** Side `n`'s V8 flags, if set (undefined: the command's own). */
export const sideFlags = (n: Side): string[] | undefined => words(process.env[`BENCH_AB_FLAGS_${n}`]);

/** Side `n`'s added command-line options. */
export const sideArgs = (n: Side): string[] => words(process.env[`BENCH_AB_ARGS_${n}`]) ?? [];

/** The first line of a run: what each side runs, beyond this checkout's defaults (`extra`: more such settings). */
export function abHeadline(
  bin: string | undefined,
  extra: (n: Side) => string | undefined = () => undefined,
): string {
  const withOf = (n: Side) =>
    [process.env[`BENCH_AB_FLAGS_${n}`], process.env[`BENCH_AB_ARGS_${n}`], extra(n)]
      .filter(Boolean)
      .map((v) => ` with ${v}`)
      .join('');
  const [a, b] = [withOf('A'), withOf('B')];
  return `A: this checkout${a}; B: ${bin ?? 'this checkout'}${b}${bin || a || b ? '' : ' (an A/A run)'}`;
}

/** Each round's values, sorted, for a line of the log. */
export const sortedList = (xs: number[], digits: number): string =>
  [...xs]
    .sort((x, y) => x - y)
    .map((x) => x.toFixed(digits))
    .join(', ');

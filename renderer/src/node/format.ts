/** Numbers and times of the Node page in words (pure: tested in test/unit). */

/** Seconds as a person says them: "45 s", "3 min", "2 h 5 min". */
export function durationWords(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.round(s / 60)} min`;
  const h = Math.floor(s / 3600);
  const m = Math.round((s % 3600) / 60);
  return m === 0 ? `${h} h` : `${h} h ${m} min`;
}

/** `part / whole` as a percentage with one decimal, exactly from bigints. */
export function percentOf(part: bigint, whole: bigint): number {
  if (whole <= 0n) return 0;
  return Number((part * 1000n) / whole) / 10;
}

/** How long ago a Unix-ns time was: "12 s ago", "3 min ago". */
export function agoWords(ns: bigint, nowMs = Date.now()): string {
  return `${durationWords((nowMs - Number(ns / 1_000_000n)) / 1000)} ago`;
}

/**
 * The status bar's catch-up line (issue #18): "Catching up: 45 % (about 2 min left)" while the node
 * pulls history it lacks, from `/node`'s `sync` (blocks known, done and left, an estimate in seconds
 * or null). Undefined when the node is not catching up. Without an estimate it says so rather than
 * guess; numbers may arrive as bigints from the node's JSON.
 */
export function catchingUpText(sync: unknown): string | undefined {
  if (typeof sync !== 'object' || sync === null) return undefined;
  const s = sync as Record<string, unknown>;
  const num = (v: unknown): number | undefined =>
    typeof v === 'number' ? v : typeof v === 'bigint' ? Number(v) : undefined;
  const known = num(s.blocks_known) ?? 0;
  const left = num(s.blocks_left) ?? 0;
  if (s.state !== 'syncing' || left <= 0 || known <= 0) return undefined;
  const done = num(s.blocks_done) ?? known - left;
  // Floored, so it never shows 100 % while blocks are left.
  const pct = Math.min(99, Math.max(0, Math.floor((done * 100) / known)));
  return `Catching up: ${pct} % (${estimateText(num(s.estimate_seconds))})`;
}

export function estimateText(seconds: number | undefined): string {
  if (seconds === undefined || !Number.isFinite(seconds) || seconds < 0) return 'time left unknown';
  if (seconds < 60) return `about ${Math.max(1, Math.round(seconds))} s left`;
  if (seconds < 3600) return `about ${Math.round(seconds / 60)} min left`;
  return `about ${(seconds / 3600).toFixed(1)} h left`;
}

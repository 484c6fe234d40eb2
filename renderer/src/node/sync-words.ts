import { agoWords, durationWords } from './format.ts';
import { pointsOf } from './chart.ts';
import type { Activity, P2PState, SyncInfo } from './queries.ts';

/** The sync state and the measured block rate in plain words (pure: tested in test/unit). */

/** Blocks per minute over the fine samples (the last 10 minutes), as measured by the node. */
export function measuredRate(a: Activity | undefined): number | undefined {
  if (!a) return undefined;
  const pts = pointsOf(a.fine);
  if (pts.length === 0) return undefined;
  const total = pts.reduce((n, p) => n + p.newBlocks, 0);
  return Math.round((total / ((pts.length * a.fine.interval_ms) / 60_000)) * 10) / 10;
}

/** The sync state in words, with a progress figure while catching up. */
export function syncWords(
  sync: SyncInfo | undefined,
  p2p: P2PState | undefined,
  peers: number,
): { title: string; detail?: string; progress?: number } {
  if (p2p === 'off')
    return { title: 'Not syncing', detail: 'This node was started without peer-to-peer networking.' };
  if (p2p === 'stopped' || p2p === 'stopping')
    return { title: 'Not syncing', detail: 'Peer-to-peer networking is stopped (see Peer-to-peer below).' };
  if (!sync) return { title: 'Unknown' };
  if (sync.state === 'syncing') {
    const done = Math.max(0, sync.blocks_known - sync.blocks_left);
    const progress = sync.blocks_known > 0 ? done / sync.blocks_known : 0;
    return {
      title: 'Catching up',
      detail:
        `${done.toLocaleString()} of ${sync.blocks_known.toLocaleString()} blocks (${Math.floor(progress * 100)}%)` +
        (sync.estimate_seconds !== null ? `, about ${durationWords(sync.estimate_seconds)} left` : ''),
      progress,
    };
  }
  if (peers === 0) return { title: 'No peers to sync from', detail: 'The node syncs once a peer connects.' };
  if (sync.last_ok_at === 0n) return { title: 'Waiting for the first sync round' };
  return {
    title: sync.last_round_ok ? 'In sync' : 'In sync, last round failed',
    detail: `Checked with its peers ${agoWords(sync.last_ok_at)} (${sync.rounds.toLocaleString()} round${sync.rounds === 1 ? '' : 's'} since start).`,
  };
}

import type { Series } from './queries.ts';

/**
 * The activity chart's arithmetic, kept apart from the drawing so it can be tested: samples to
 * points (blocks per minute, peers), a round scale, and the shapes in SVG user units.
 */
export interface ChartPoint {
  /** Unix ns of the sample. */
  at: bigint;
  /** Blocks committed in the sample's interval, as a rate per minute. */
  blocksPerMinute: number;
  /** Blocks committed in the interval, as counted. */
  newBlocks: number;
  peers: number;
}

/**
 * One point per sample but the first of a ring: the first has no interval before it (its count of
 * new blocks is 0 by construction, not by measurement).
 */
export function pointsOf(series: Series): ChartPoint[] {
  const perMinute = series.interval_ms > 0 ? 60_000 / series.interval_ms : 0;
  return series.samples.slice(1).map((s) => ({
    at: s.at,
    newBlocks: s.new_blocks,
    blocksPerMinute: Math.round(s.new_blocks * perMinute * 10) / 10,
    peers: s.peers,
  }));
}

/** The smallest of 1, 2, 5 × 10^k at or above `v` (at least 1): a scale's top a person can read. */
export function niceMax(v: number): number {
  if (!(v > 1)) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 5, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}

export interface Bar {
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface ChartShapes {
  bars: Bar[];
  /** SVG path of the peer count (a step line), empty without points. */
  peerPath: string;
  blocksMax: number;
  peersMax: number;
}

export interface Box {
  left: number;
  top: number;
  width: number;
  height: number;
}

export function shapesOf(points: readonly ChartPoint[], box: Box): ChartShapes {
  const blocksMax = niceMax(Math.max(0, ...points.map((p) => p.blocksPerMinute)));
  // Room above the peer line, so a steady count does not run along the chart's top edge.
  const peersMax = niceMax(Math.max(0, ...points.map((p) => p.peers)) + 1);
  const n = points.length;
  const slot = n > 0 ? box.width / n : 0;
  const bottom = box.top + box.height;
  const bars = points.map((p, i) => {
    const h = (p.blocksPerMinute / blocksMax) * box.height;
    return {
      x: box.left + i * slot + slot * 0.15,
      y: bottom - h,
      width: Math.max(slot * 0.7, 0.5),
      height: h,
    };
  });
  let peerPath = '';
  points.forEach((p, i) => {
    const y = bottom - (p.peers / peersMax) * box.height;
    const x0 = box.left + i * slot;
    peerPath += `${i === 0 ? 'M' : 'L'}${r(x0)},${r(y)} L${r(x0 + slot)},${r(y)} `;
  });
  return { bars, peerPath: peerPath.trim(), blocksMax, peersMax };
}

const r = (v: number) => Math.round(v * 10) / 10;

/** A short summary of the points for the caption: what a person wants from the chart in words. */
export function summaryOf(points: readonly ChartPoint[], intervalMs: number): string {
  if (points.length === 0) return 'No samples yet: the node takes one every few seconds.';
  const total = points.reduce((n, p) => n + p.newBlocks, 0);
  const minutes = (points.length * intervalMs) / 60_000;
  const span = minutes < 1 ? `${Math.round(minutes * 60)} seconds` : `${Math.round(minutes)} minutes`;
  const peersNow = points[points.length - 1]!.peers;
  const rate = minutes > 0 ? Math.round((total / minutes) * 10) / 10 : 0;
  return `${total.toLocaleString()} blocks in the last ${span} (${rate} per minute on average); ${peersNow} peer${peersNow === 1 ? '' : 's'} now.`;
}

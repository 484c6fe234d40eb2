import { describe, expect, it } from 'vitest';
import { curlExamples } from '../../renderer/src/node/api-examples.ts';
import { niceMax, pointsOf, shapesOf, summaryOf } from '../../renderer/src/node/chart.ts';
import { agoWords, durationWords, percentOf } from '../../renderer/src/node/format.ts';
import { parseSse } from '../../renderer/src/node/log-stream.ts';
import type { Series, SyncInfo } from '../../renderer/src/node/queries.ts';
import { measuredRate, syncWords } from '../../renderer/src/node/sync-words.ts';

/** The Node page's pure parts: chart arithmetic, SSE framing, words for sync and times, curl lines. */
const series = (newBlocks: number[], peers = 1, interval = 5000): Series => ({
  interval_ms: interval,
  capacity: 120,
  samples: newBlocks.map((n, i) => ({
    at: BigInt(i + 1) * 1_000_000_000n,
    blocks: 10 + i,
    new_blocks: n,
    peers,
  })),
});

describe('activity chart', () => {
  it('drops the first sample (no interval before it) and turns counts into a rate per minute', () => {
    const pts = pointsOf(series([0, 2, 0, 5]));
    expect(pts.map((p) => p.newBlocks)).toEqual([2, 0, 5]);
    expect(pts.map((p) => p.blocksPerMinute)).toEqual([24, 0, 60]);
  });

  it('rounds scale tops to 1, 2, 5 × 10^k', () => {
    expect([0, 0.5, 1, 1.1, 3, 7, 10, 11, 180, 201, 999].map(niceMax)).toEqual([
      1, 1, 1, 2, 5, 10, 10, 20, 200, 500, 1000,
    ]);
  });

  it('lays bars inside the box, the tallest at the scale it reaches, and the peer line with room above', () => {
    const pts = pointsOf(series([0, 10, 20], 3));
    const box = { left: 10, top: 0, width: 200, height: 100 };
    const s = shapesOf(pts, box);
    expect(s.blocksMax).toBe(500); // 240 per minute
    expect(s.peersMax).toBe(5);
    for (const b of s.bars) {
      expect(b.x).toBeGreaterThanOrEqual(box.left);
      expect(b.x + b.width).toBeLessThanOrEqual(box.left + box.width);
      expect(b.y + b.height).toBeCloseTo(100);
    }
    expect(s.bars[1]!.height).toBeCloseTo(2 * s.bars[0]!.height);
    expect(s.peerPath.startsWith('M10,40')).toBe(true);
    expect(shapesOf([], box)).toEqual({ bars: [], peerPath: '', blocksMax: 1, peersMax: 1 });
  });

  it('sums up the points in words for the caption', () => {
    expect(summaryOf([], 5000)).toMatch(/No samples yet/);
    expect(summaryOf(pointsOf(series([0, 3, 3], 2)), 5000)).toBe(
      '6 blocks in the last 10 seconds (36 per minute on average); 2 peers now.',
    );
    expect(measuredRate({ now: 0n, fine: series([0, 3, 3]), minutes: series([0]) })).toBe(36);
    expect(measuredRate({ now: 0n, fine: series([0]), minutes: series([0]) })).toBeUndefined();
  });
});

describe('SSE framing', () => {
  it('splits complete frames, joins data lines, skips comments and keeps a partial frame', () => {
    const { events, rest } = parseSse(
      ': connected\n\nid: 7\nevent: log\ndata: {"a":1}\n\nevent: gap\ndata: x\ndata: y\n\nid: 8\nev',
    );
    expect(events).toEqual([
      { id: '7', event: 'log', data: '{"a":1}' },
      { event: 'gap', data: 'x\ny' },
    ]);
    expect(rest).toBe('id: 8\nev');
    expect(parseSse('id: 1\r\nevent: log\r\ndata: z\r\n\r\n').events).toEqual([
      { id: '1', event: 'log', data: 'z' },
    ]);
  });
});

describe('sync and time in words', () => {
  const sync = (s: Partial<SyncInfo>): SyncInfo => ({
    state: 'idle',
    blocks_known: 0,
    blocks_left: 0,
    estimate_seconds: null,
    last_round_ok: true,
    last_ok_at: 0n,
    rounds: 0,
    ...s,
  });
  it('says what the node does, with progress and an estimate while catching up', () => {
    expect(syncWords(sync({}), 'off', 0).detail).toMatch(/started without peer-to-peer/);
    expect(syncWords(sync({}), 'stopped', 0).detail).toMatch(/stopped/);
    expect(syncWords(sync({}), 'running', 0).title).toBe('No peers to sync from');
    expect(syncWords(sync({}), 'running', 1).title).toBe('Waiting for the first sync round');
    const catching = syncWords(
      sync({ state: 'syncing', blocks_known: 1000, blocks_left: 250, estimate_seconds: 130 }),
      'running',
      1,
    );
    expect(catching).toEqual({
      title: 'Catching up',
      detail: '750 of 1,000 blocks (75%), about 2 min left',
      progress: 0.75,
    });
    const now = BigInt(Date.now()) * 1_000_000n;
    const done = syncWords(sync({ last_ok_at: now - 5_000_000_000n, rounds: 1 }), 'running', 2);
    expect(done.title).toBe('In sync');
    expect(done.detail).toMatch(/^Checked with its peers 5 s ago \(1 round since start\)\.$/);
  });

  it('durations, ago and exact percentages', () => {
    expect([0, 44.6, 60, 150, 3600, 3720].map(durationWords)).toEqual([
      '0 s',
      '45 s',
      '1 min',
      '3 min',
      '1 h',
      '1 h 2 min',
    ]);
    expect(agoWords(2_000_000_000n, 5000)).toBe('3 s ago');
    expect(percentOf(1n, 3n)).toBe(33.3);
    expect(percentOf(42_000_000_000_000n, 42_000_000_000_000n)).toBe(100);
    expect(percentOf(5n, 0n)).toBe(0);
  });
});

describe('curl examples', () => {
  it('name the base and quote the token file for a POSIX shell; without a file, the environment variable', () => {
    const ex = curlExamples('http://127.0.0.1:8080', "/home/o'neil/admin-token");
    expect(ex[0]!.command).toBe('curl -s http://127.0.0.1:8080/node');
    expect(ex[3]!.command).toBe(
      `curl -s -H "Authorization: Bearer $(cat '/home/o'\\''neil/admin-token')" 'http://127.0.0.1:8080/node/log?level=warn'`,
    );
    expect(curlExamples('http://h:1', null)[5]!.command).toContain('Bearer $LEDGER_NODE_ADMIN_TOKEN');
  });
});

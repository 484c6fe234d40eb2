import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { ActivitySampler } from '../../node-core/metrics/activity.ts';
import { LogRing, MAX_LINE_CHARS } from '../../node-core/metrics/log-ring.ts';
import { teeLogger } from '../../node-core/metrics/log-tee.ts';
import { P2PSwitch, P2PSwitchError } from '../../node-core/net/p2p-switch.ts';
import { PeerLatency } from '../../node-core/net/peer-latency.ts';

/** The Node page's bookkeeping modules: the log ring and its tee, activity samples, latency, the p2p switch. */
const line = (level: number, msg: string, extra: Record<string, unknown> = {}) =>
  `${JSON.stringify({ level, time: 1_700_000_000_000, name: 'x', msg, ...extra })}\n`;

describe('LogRing', () => {
  it('keeps the newest `capacity` lines, counts what it dropped, and queries oldest first', () => {
    const ring = new LogRing(3);
    for (let i = 1; i <= 5; i++) ring.write(line(30, `line ${i}`));
    expect(ring.lastSeq).toBe(5);
    expect(ring.firstSeq).toBe(3);
    expect(ring.dropped).toBe(2);
    expect(ring.query().map((l) => l.msg)).toEqual(['line 3', 'line 4', 'line 5']);
    expect(ring.query({ limit: 2 }).map((l) => l.seq)).toEqual([4, 5]);
    // after= a seq no longer held starts at the oldest held.
    expect(ring.query({ after: 1 }).map((l) => l.seq)).toEqual([3, 4, 5]);
    expect(ring.query({ after: 4 }).map((l) => l.seq)).toEqual([5]);
    expect(ring.query({ after: 5 })).toEqual([]);
  });

  it('filters by lowest level and by text in the message or the fields, case-insensitively', () => {
    const ring = new LogRing(10);
    ring.write(line(20, 'dial failed', { addr: '/ip4/10.0.0.1/tcp/7075' }));
    ring.write(line(40, 'peer refused', { reason: 'Other Network' }));
    ring.write(line(50, 'finalization failed'));
    expect(ring.query({ level: 'warn' }).map((l) => l.level_name)).toEqual(['warn', 'error']);
    expect(ring.query({ text: 'other network' }).map((l) => l.msg)).toEqual(['peer refused']);
    expect(ring.query({ text: '10.0.0.1' }).map((l) => l.msg)).toEqual(['dial failed']);
    expect(ring.query({ text: 'FAILED', level: 'error' }).map((l) => l.msg)).toEqual(['finalization failed']);
    // Bindings are not repeated in the fields.
    expect(ring.query()[0]!.fields).toEqual({ addr: '/ip4/10.0.0.1/tcp/7075' });
  });

  it('reads big integers exactly, keeps text that is not JSON, and cuts a huge line to its message', () => {
    const ring = new LogRing(10);
    ring.write('{"level":30,"time":1,"msg":"at","at":1764012345678901234}\n');
    ring.write('plain text\n');
    ring.write(line(50, 'huge', { blob: 'x'.repeat(MAX_LINE_CHARS) }));
    const [big, plain, huge] = ring.query();
    expect(big!.fields.at).toBe(1764012345678901234n);
    expect(plain!.msg).toBe('plain text');
    expect(huge).toMatchObject({ msg: 'huge', level: 50, truncated: true });
    expect(JSON.stringify(huge).length).toBeLessThan(1000);
  });

  it('tells subscribers each new line; a throwing subscriber does not stop the others', () => {
    const ring = new LogRing(2);
    const seen: number[] = [];
    ring.subscribe(() => {
      throw new Error('bad listener');
    });
    const off = ring.subscribe((l) => seen.push(l.seq));
    ring.write(line(30, 'a'));
    off();
    ring.write(line(30, 'b'));
    expect(seen).toEqual([1]);
  });
});

describe('teeLogger', () => {
  it('writes every line both to the given logger destination and to the ring, with its level and bindings', () => {
    const out: string[] = [];
    const dest = new Writable({
      write(chunk: Buffer, _enc, cb) {
        out.push(chunk.toString());
        cb();
      },
    });
    const base = pino({ level: 'debug', base: { name: 'ledger-node' } }, dest);
    const ring = new LogRing(10);
    const log = teeLogger(base, ring);
    log.debug({ peer: 'p1' }, 'dial failed');
    log.trace('not at this level');
    expect(out.length).toBe(1);
    expect(JSON.parse(out[0]!)).toMatchObject({
      name: 'ledger-node',
      level: 20,
      msg: 'dial failed',
      peer: 'p1',
    });
    expect(ring.query().map((l) => [l.msg, l.fields])).toEqual([['dial failed', { peer: 'p1' }]]);
  });

  it('without a logger, keeps info and above in the ring only', () => {
    const ring = new LogRing(10);
    const log = teeLogger(undefined, ring);
    log.debug('hidden');
    log.warn('shown');
    expect(ring.query().map((l) => l.msg)).toEqual(['shown']);
  });
});

describe('ActivitySampler', () => {
  it('samples at start and on its timers, with the blocks added per interval and bounded rings', async () => {
    let blocks = 10;
    let t = 0n;
    const s = new ActivitySampler(
      { blocks: () => blocks, peers: () => 2, now: () => (t += 1n) },
      { fineMs: 20, fineKeep: 3, coarseMs: 10_000 },
    );
    s.start();
    blocks = 15;
    await new Promise((r) => setTimeout(r, 150));
    s.stop();
    const fine = s.fine.samples;
    expect(fine.length).toBe(3);
    expect(fine.every((x) => x.peers === 2)).toBe(true);
    expect(s.minutes.samples).toEqual([{ at: 2n, blocks: 10, new_blocks: 0, peers: 2 }]);
    expect(fine.at(-1)!.blocks).toBe(15);
    expect(fine.every((x) => x.new_blocks === 0 || x.new_blocks === 5)).toBe(true);
  });

  it('refuses intervals that are not positive integers', () => {
    const deps = { blocks: () => 0, peers: () => 0, now: () => 0n };
    expect(() => new ActivitySampler(deps, { fineMs: 0 })).toThrow(/fineMs/);
    expect(() => new ActivitySampler(deps, { coarseKeep: 1.5 })).toThrow(/coarseKeep/);
  });
});

describe('PeerLatency', () => {
  it('measures peers that answer, forgets peers gone, shows none for one that does not answer', async () => {
    let peers = ['a', 'b'];
    const lat = new PeerLatency(
      {
        peers: () => peers,
        probe: (p) =>
          p === 'a' ? new Promise((r) => setTimeout(r, 15)) : Promise.reject(new Error('not connected')),
      },
      { tickMs: 10_000 },
    );
    lat.tick();
    await new Promise((r) => setTimeout(r, 60));
    expect(lat.latencyMs('a')).toBeGreaterThanOrEqual(10);
    expect(lat.latencyMs('b')).toBeUndefined();
    peers = ['b'];
    lat.tick();
    expect(lat.latencyMs('a')).toBeUndefined();
  });
});

describe('P2PSwitch', () => {
  const fakeHost = () => {
    const calls: string[] = [];
    let running = true;
    return {
      calls,
      host: {
        async start() {
          calls.push('start');
          running = true;
        },
        async stop() {
          calls.push('stop');
          running = false;
        },
        get listenAddrs() {
          return running ? ['/ip4/127.0.0.1/tcp/41234/p2p/12D3'] : [];
        },
      },
    };
  };

  it('stops and starts the host once per change, pinning a port 0 to the port it had', async () => {
    const { host, calls } = fakeHost();
    const listen = ['/ip4/127.0.0.1/tcp/0'];
    const sw = new P2PSwitch({ host, listen });
    expect(sw.state).toBe('running');
    expect(await sw.set(true)).toBe('running');
    expect(calls).toEqual([]);
    // Two requests at once: one stop.
    const [x, y] = await Promise.all([sw.set(false), sw.set(false)]);
    expect([x, y]).toEqual(['stopped', 'stopped']);
    expect(calls).toEqual(['stop']);
    expect(listen).toEqual(['/ip4/127.0.0.1/tcp/41234']);
    expect(await sw.set(true)).toBe('running');
    expect(calls).toEqual(['stop', 'start']);
  });

  it('refuses with a typed error on a node without networking, and reports a failed start', async () => {
    const off = new P2PSwitch({ host: undefined, listen: [] });
    expect(off.state).toBe('off');
    await expect(off.set(true)).rejects.toMatchObject({ code: 'p2p_off' });
    const { host } = fakeHost();
    const failing = {
      ...host,
      start: () => Promise.reject(Object.assign(new Error('listen EADDRINUSE'), { code: 'EADDRINUSE' })),
    };
    const sw = new P2PSwitch({ host: failing, listen: [] });
    await sw.set(false);
    const err = await sw.set(true).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(P2PSwitchError);
    expect(err).toMatchObject({ code: 'start_failed', message: expect.stringMatching(/port is taken/) });
    expect(sw.state).toBe('stopped');
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Account, http, kitOf, XE } from '../helpers/ledger-kit.ts';
import { startTestNode, type TestNode, waitFor } from '../helpers/node.ts';
import { peerCount, twoNodes } from '../helpers/p2p.ts';

/**
 * The Node page's routes on real nodes: peers with round trips, the activity history, the node's
 * log (admin) and its live stream, and stopping and starting peer-to-peer networking at run time
 * (two real nodes on loopback: they really disconnect and reconnect, and gossip flows again).
 */
type Json = Record<string, unknown>;
type LogLine = { seq: number; level: number; level_name: string; msg: string; fields: Json };
type LogPage = { lines: LogLine[]; first_seq: number; last_seq: number; dropped: number; capacity: number };

const auth = (t: TestNode) => ({ authorization: `Bearer ${t.node.adminToken}` });

/** Reads Server-Sent Events from a fetch body until `until` says enough (or the time runs out). */
async function readEvents(
  res: Response,
  until: (events: { id?: string; event?: string; data: string }[]) => boolean,
  ms = 10_000,
): Promise<{ id?: string; event?: string; data: string }[]> {
  const reader = res.body!.getReader();
  const events: { id?: string; event?: string; data: string }[] = [];
  let buf = '';
  const end = Date.now() + ms;
  try {
    while (!until(events)) {
      if (Date.now() > end) throw new Error(`timed out; events so far: ${JSON.stringify(events)}`);
      const chunk = await Promise.race([
        reader.read(),
        new Promise<never>((_, rej) => setTimeout(() => rej(new Error('read timed out')), end - Date.now())),
      ]);
      if (chunk.done) break;
      buf += new TextDecoder().decode(chunk.value);
      let cut;
      while ((cut = buf.indexOf('\n\n')) >= 0) {
        const frame = buf.slice(0, cut);
        buf = buf.slice(cut + 2);
        const ev: { id?: string; event?: string; data: string } = { data: '' };
        for (const line of frame.split('\n')) {
          if (line.startsWith('id: ')) ev.id = line.slice(4);
          else if (line.startsWith('event: ')) ev.event = line.slice(7);
          else if (line.startsWith('data: ')) ev.data += line.slice(6);
        }
        if (ev.event !== undefined) events.push(ev);
      }
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
  return events;
}

describe('Node page routes on one node without peer-to-peer networking', () => {
  let t: TestNode;
  beforeAll(async () => {
    t = await startTestNode({ activity: { fineMs: 150, coarseMs: 60_000 } });
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('GET /node/peers says networking is off and lists no peer', async () => {
    const r = await http(t.node.url, 'GET', '/node/peers');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ p2p: { state: 'off', listen_addrs: [] }, peer_count: 0, peers: [] });
  });

  it('POST /node/p2p: 401 without the token, 400 for a bad body, 409 on a node started without networking', async () => {
    expect((await http(t.node.url, 'POST', '/node/p2p', { running: false })).status).toBe(401);
    const wrong = await http(
      t.node.url,
      'POST',
      '/node/p2p',
      { running: false },
      { authorization: 'Bearer nope' },
    );
    expect(wrong.status).toBe(401);
    expect(wrong.body).toEqual({ error: 'invalid or missing admin token' });
    for (const body of [
      {},
      { running: 'yes' },
      { running: 1 },
      [true],
      { running: true, extra: 1 },
      'null',
    ]) {
      const r = await http(t.node.url, 'POST', '/node/p2p', body, auth(t));
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body).toEqual({ error: 'body must be {"running": true} or {"running": false}' });
    }
    const notJson = await http(t.node.url, 'POST', '/node/p2p', '{running', auth(t));
    expect(notJson.status).toBe(400);
    expect(typeof (notJson.body as Json).error).toBe('string');
    const off = await http(t.node.url, 'POST', '/node/p2p', { running: true }, auth(t));
    expect(off.status).toBe(409);
    expect((off.body as Json).error).toMatch(/--no-p2p/);
    expect((await http(t.node.url, 'GET', '/node/peers')).body).toMatchObject({ p2p: { state: 'off' } });
  });

  it('GET /node/activity samples blocks and peers, and counts new blocks per interval', async () => {
    const first = (await http(t.node.url, 'GET', '/node/activity')).body as {
      now: bigint;
      fine: {
        interval_ms: number;
        samples: { at: bigint; blocks: number; new_blocks: number; peers: number }[];
      };
      minutes: { interval_ms: number; capacity: number; samples: unknown[] };
    };
    expect(first.fine.interval_ms).toBe(150);
    expect(first.minutes).toMatchObject({ interval_ms: 60_000, capacity: 1440 });
    // The first sample of each ring is taken at start.
    expect(first.minutes.samples.length).toBe(1);
    expect(first.fine.samples.length).toBeGreaterThanOrEqual(1);
    const before = first.fine.samples.at(-1)!;
    expect(typeof before.at).toBe('bigint');
    expect(before.peers).toBe(0);
    const kit = await kitOf(t);
    const a = new Account(kit);
    await a.claim(XE);
    await a.claim(XE);
    const after = (await waitFor(
      async () => {
        const s = ((await http(t.node.url, 'GET', '/node/activity')).body as typeof first).fine.samples;
        return s.at(-1)!.blocks >= before.blocks + 2 ? s : undefined;
      },
      5000,
      'a sample after the claims',
    ))!;
    // The two blocks show as new blocks in the samples after `before`, exactly.
    const later = after.filter((s) => s.at > before.at);
    expect(later.reduce((n, s) => n + s.new_blocks, 0)).toBe(after.at(-1)!.blocks - before.blocks);
    for (let i = 1; i < after.length; i++) expect(after[i]!.at > after[i - 1]!.at).toBe(true);
  });

  it('GET /node/log: admin only; the newest lines, filtered by level and text, paged with after', async () => {
    expect((await http(t.node.url, 'GET', '/node/log')).status).toBe(401);
    const allRes = await http(t.node.url, 'GET', '/node/log', undefined, auth(t));
    expect(allRes.status, allRes.text).toBe(200);
    const all = allRes.body as LogPage;
    expect(all.capacity).toBe(2000);
    expect(all.lines.length).toBeGreaterThan(0);
    expect(all.last_seq).toBe(all.lines.at(-1)!.seq);
    // The node's own start-up line is there, with its fields.
    const created = all.lines.find((l) => l.msg === 'created a development network');
    expect(created).toMatchObject({ level: 30, level_name: 'info' });
    expect(typeof created!.fields.network_id).toBe('string');
    const found = (await http(t.node.url, 'GET', '/node/log?q=DEVELOPMENT%20net', undefined, auth(t)))
      .body as LogPage;
    expect(found.lines.map((l) => l.msg)).toContain('created a development network');
    expect(
      found.lines.every((l) =>
        `${l.msg} ${JSON.stringify(l.fields)}`.toLowerCase().includes('development net'),
      ),
    ).toBe(true);
    // A field's value is searched too.
    const byField = (
      await http(t.node.url, 'GET', `/node/log?q=${created!.fields.network_id as string}`, undefined, auth(t))
    ).body as LogPage;
    expect(byField.lines.map((l) => l.seq)).toContain(created!.seq);
    const errors = (await http(t.node.url, 'GET', '/node/log?level=warn', undefined, auth(t)))
      .body as LogPage;
    expect(errors.lines.every((l) => l.level >= 40)).toBe(true);
    expect(errors.lines.map((l) => l.seq)).not.toContain(created!.seq);
    const one = (await http(t.node.url, 'GET', '/node/log?limit=1', undefined, auth(t))).body as LogPage;
    expect(one.lines.length).toBe(1);
    const paged = (
      await http(t.node.url, 'GET', `/node/log?after=${created!.seq - 1}&limit=1`, undefined, auth(t))
    ).body as LogPage;
    expect(paged.lines.map((l) => l.seq)).toEqual([created!.seq]);
  });

  it('GET /node/log refuses bad queries with 400 and the error shape', async () => {
    for (const q of [
      'level=loud',
      'limit=0',
      'limit=1001',
      'limit=-1',
      'after=1.5',
      'after=x',
      `q=${'a'.repeat(201)}`,
    ]) {
      const r = await http(t.node.url, 'GET', `/node/log?${q}`, undefined, auth(t));
      expect(r.status, q).toBe(400);
      expect(typeof (r.body as Json).error, q).toBe('string');
    }
    const r = await http(t.node.url, 'GET', '/node/log/events?last_event_id=abc', undefined, auth(t));
    expect(r.status).toBe(400);
    expect(typeof (r.body as Json).error).toBe('string');
    expect((await http(t.node.url, 'GET', '/node/log/events')).status).toBe(401);
  });

  it('GET /node/log/events replays after Last-Event-ID, filtered, as SSE', async () => {
    const res = await fetch(`${t.node.url}/node/log/events?q=development`, {
      headers: { ...auth(t), 'last-event-id': '0' },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const events = await readEvents(res, (ev) => ev.some((e) => e.event === 'log'));
    const line = JSON.parse(events.find((e) => e.event === 'log')!.data) as LogLine;
    expect(line.msg).toBe('created a development network');
    expect(events.find((e) => e.event === 'log')!.id).toBe(String(line.seq));
  });

  it('the manifest and OpenAPI list the routes, the admin ones as such', async () => {
    const m = (await http(t.node.url, 'GET', '/')).body as { endpoints: { method: string; path: string }[] };
    const paths = m.endpoints.map((e) => `${e.method} ${e.path}`);
    for (const p of [
      'GET /node/peers',
      'GET /node/activity',
      'GET /node/log',
      'GET /node/log/events',
      'POST /node/p2p',
    ])
      expect(paths).toContain(p);
    const doc = (await http(t.node.url, 'GET', '/openapi.json')).body as {
      paths: Record<string, Record<string, { security?: unknown[] }>>;
    };
    expect(doc.paths['/node/log']?.get).toBeDefined();
    expect(doc.paths['/node/p2p']?.post).toBeDefined();
  });
});

describe('Node page routes on two connected nodes', () => {
  let a: TestNode;
  let b: TestNode;
  beforeAll(async () => {
    [a, b] = await twoNodes({ activity: { fineMs: 500 } }, { activity: { fineMs: 500 } });
  });
  afterAll(async () => {
    await b?.stop();
    await a?.stop();
  });

  type Peers = {
    p2p: { state: string; listen_addrs: string[] };
    peer_count: number;
    peers: {
      id: string;
      address: string;
      version: string;
      connected_at: bigint;
      latency_ms: number | null;
    }[];
  };
  const peersOf = async (t: TestNode) => (await http(t.node.url, 'GET', '/node/peers')).body as Peers;

  it('GET /node/peers shows the other node with its address, version, connection time and a measured round trip', async () => {
    const bId = (await b.client.node()).id;
    const p = (await waitFor(
      async () => {
        const r = await peersOf(a);
        return r.peers[0]?.latency_ms !== null && r.peers[0]?.latency_ms !== undefined ? r : undefined;
      },
      8000,
      'a measured latency',
    ))!;
    expect(p.p2p.state).toBe('running');
    expect(p.peer_count).toBe(1);
    const peer = p.peers[0]!;
    expect(peer.id).toBe(bId);
    expect(peer.address).toMatch(/^\/ip4\/127\.0\.0\.1\/tcp\/\d+/);
    expect(peer.version.length).toBeGreaterThan(0);
    expect(typeof peer.connected_at).toBe('bigint');
    expect(peer.latency_ms).toBeGreaterThan(0);
    expect(peer.latency_ms).toBeLessThan(5000);
  });

  it('stopping networking on the dialling node disconnects both, starting it reconnects, and blocks flow again', async () => {
    const stopped = await http(b.node.url, 'POST', '/node/p2p', { running: false }, auth(b));
    expect(stopped.status).toBe(200);
    expect(stopped.body).toMatchObject({ state: 'stopped', peer_count: 0, listen_addrs: [] });
    expect((await peersOf(b)).p2p.state).toBe('stopped');
    await waitFor(async () => (await peerCount(a)) === 0, 10_000, 'a to see b gone');
    // Stopping again changes nothing.
    expect((await http(b.node.url, 'POST', '/node/p2p', { running: false }, auth(b))).body).toMatchObject({
      state: 'stopped',
    });
    // A block made on a while b is down does not reach b.
    const kit = await kitOf(a);
    const acct = new Account(kit);
    const c1 = await acct.claim(XE);
    await new Promise((r) => setTimeout(r, 300));
    expect((await http(b.node.url, 'GET', `/blocks/${c1.hash}`)).status).toBe(404);

    const started = await http(b.node.url, 'POST', '/node/p2p', { running: true }, auth(b));
    expect(started.status).toBe(200);
    expect((started.body as Json).state).toBe('running');
    expect(((started.body as Json).listen_addrs as string[]).length).toBeGreaterThan(0);
    await waitFor(
      async () => (await peerCount(a)) === 1 && (await peerCount(b)) === 1,
      15_000,
      'reconnected',
    );
    // Gossip works again: a new block reaches b (and the sync round brings the missed one).
    const c2 = await acct.claim(XE);
    await waitFor(
      async () => (await http(b.node.url, 'GET', `/blocks/${c2.hash}`)).status === 200,
      15_000,
      'c2 on b',
    );
    await waitFor(
      async () => (await http(b.node.url, 'GET', `/blocks/${c1.hash}`)).status === 200,
      40_000,
      'c1 on b',
    );
  }, 90_000);

  it('stopping and starting the dialled node (port 0) brings it back on its port, and the dialler finds it again', async () => {
    const before = (await peersOf(a)).p2p.listen_addrs.find((x) => x.includes('/127.0.0.1/'))!;
    const logRes = await fetch(`${a.node.url}/node/log/events?q=by%20the%20operator`, { headers: auth(a) });
    expect(logRes.status).toBe(200);
    const stopped = await http(a.node.url, 'POST', '/node/p2p', { running: false }, auth(a));
    expect((stopped.body as Json).state).toBe('stopped');
    await waitFor(async () => (await peerCount(b)) === 0, 10_000, 'b to see a gone');
    const started = await http(a.node.url, 'POST', '/node/p2p', { running: true }, auth(a));
    expect((started.body as Json).state).toBe('running');
    expect((started.body as { listen_addrs: string[] }).listen_addrs).toContain(before);
    // b redials its configured address every 3 s.
    await waitFor(
      async () => (await peerCount(b)) === 1 && (await peerCount(a)) === 1,
      20_000,
      'b redialled a',
    );
    // The operator's stop and start were logged, live, to the stream filtered on them.
    const events = await readEvents(logRes, (ev) => ev.filter((e) => e.event === 'log').length >= 2);
    const msgs = events.filter((e) => e.event === 'log').map((e) => (JSON.parse(e.data) as LogLine).msg);
    expect(msgs).toEqual([
      'peer-to-peer networking stopped by the operator',
      'peer-to-peer networking started by the operator',
    ]);
  }, 60_000);

  it('GET /node/activity counts the peers', async () => {
    type Activity = { fine: { samples: { peers: number }[] } };
    const samples = async () =>
      ((await http(a.node.url, 'GET', '/node/activity')).body as Activity).fine.samples;
    // Peers were 0 while networking was stopped, 1 before and after.
    await waitFor(async () => (await samples()).at(-1)?.peers === 1, 8000, 'a sample with the peer');
    expect((await samples()).every((s) => s.peers === 0 || s.peers === 1)).toBe(true);
  }, 15_000);
});

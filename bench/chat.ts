/**
 * Chat benchmarks (issue #13), `npm run bench -- chat`:
 *
 * (a) messages/s accepted by `POST /chat/send` on one node (a `ledger-node` child process, the
 *     development network's chat difficulty, the recipient registered on the same node), several
 *     clients with keep-alive, every envelope signed and solved before the clock starts; the
 *     baseline is `GET /health` on the same node with the same clients, measured in the same run;
 * (b) memory (RSS, and the V8 heap after GC) of a node holding 100,000 messages against the same node
 *     empty, the time to store them (straight into the node's chat store, `node.chatStore.put`, not
 *     over HTTP: the figure is the store's, not the API's), the time to read a page of
 *     `/chat/messages` and `/chat/contacts` at that size, and the time an account whose messages are
 *     spread among the 100,000 takes to get them all from `/chat/events` (a client resuming from the
 *     start), beside the first page of its `/chat/messages`. The node runs in a child process of this
 *     file (`--chat-store-child`) so the figures are its own;
 * (c) latency from a send on node A to the event on node B's `/chat/events` stream
 *     (benchLatencyAcrossNodes): two `ledger-node` processes on one development network, the
 *     recipient registered on B, each message sent to A, which forwards it to B over libp2p. Where
 *     A refuses a message for a recipient on another node (no delivery between nodes yet), it says
 *     "skipped: delivery between nodes not available".
 */
import { type ChildProcess, fork } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { Agent, get as httpGetRaw, request } from 'node:http';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ChatStore } from '../node-core/chat/chat-store.ts';
import { signBytesNode } from '../node-core/fastpath/ed25519.ts';
import { PowSolver } from '../node-core/fastpath/pow-solver.ts';
import { LedgerNode } from '../node-core/node.ts';
import { bytesToHex, hexToBytes } from '../node-core/protocol/hex.ts';
import { stringifyJson } from '../node-core/protocol/json.ts';
import {
  type ChatEnvelope,
  chatEnvelopeIdBytes,
  signChatReadAuth,
  signDirectoryRegistration,
} from '../node-core/protocol/payloads.ts';
import { expectedAttempts, parseDifficulty } from '../node-core/protocol/pow.ts';
import { loadGet } from './load.ts';
import { fmtRate, nowNs, ratio } from './measure.ts';
import { fastKey, type Key } from './node.ts';
import { spawnNode, type SpawnedNode } from './spawn-node.ts';

const CHILD_FLAG = '--chat-store-child';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function quantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

const ms = (x: number) => `${x.toFixed(x < 10 ? 2 : 1)} ms`;

// ---- HTTP ------------------------------------------------------------------------------------------

function post(url: string, body: string, agent?: Agent): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        agent,
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        let out = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (out += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: out }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

async function getJson<T>(url: string): Promise<T> {
  const r = await fetch(url);
  if (!r.ok) throw new Error(`GET ${url}: ${r.status} ${await r.text()}`);
  return (await r.json()) as T;
}

async function register(url: string, key: Key, nodePeer: string): Promise<void> {
  const reg = signDirectoryRegistration(
    { account: key.pub, node_peer: nodePeer, timestamp: nowNs() },
    key.seed,
  );
  const r = await post(`${url}/directory/register`, stringifyJson(reg));
  if (r.status !== 200) throw new Error(`directory registration: ${r.status} ${r.body}`);
}

async function proof(url: string, key: Key): Promise<string> {
  const { challenge } = await getJson<{ challenge: string }>(`${url}/chat/auth/challenge`);
  const sig = signChatReadAuth(challenge, key.seed);
  return `account=${key.pub}&pub_key=${key.pub}&challenge=${challenge}&sig=${sig}`;
}

/** A signed envelope as `POST /chat/send` takes it (JSON text), its proof of work solved. */
async function presign(
  solver: PowSolver | undefined,
  from: Key,
  to: string,
  message: string,
  timestamp: bigint,
  difficulty: bigint,
): Promise<string> {
  const env: ChatEnvelope = { from: from.pub, to, message, timestamp };
  const id = chatEnvelopeIdBytes(env);
  const nonce = difficulty === 0n || !solver ? 0n : (await solver.solve(id, difficulty)).nonce;
  return stringifyJson({ ...env, signature: bytesToHex(signBytesNode(id, from.seed)), pow_nonce: nonce });
}

// ---- (a) messages per second -------------------------------------------------------------------------

async function benchSend(log: (l: string) => void, dir: string): Promise<Record<string, number>> {
  const CLIENTS = Number(process.env.BENCH_CHAT_CLIENTS ?? 8);
  const PER_CLIENT = Number(process.env.BENCH_CHAT_PER_CLIENT ?? 400);
  const WARMUP = 10;
  // The development network as `ledger-node` creates it by default: its chat difficulty follows.
  const node = await spawnNode([
    '--data-dir',
    join(dir, 'send'),
    '--api-port',
    '0',
    '--rate-limit',
    'off',
    // Peer-to-peer on (loopback): the directory takes registrations naming a libp2p peer id only.
    '--p2p-port',
    '0',
    '--p2p-bind',
    '127.0.0.1',
    '--no-provide',
    '--log-level',
    'warn',
  ]);
  try {
    const info = await getJson<{ chat_pow_difficulty: string }>(`${node.url}/node`);
    const difficulty = parseDifficulty(info.chat_pow_difficulty);
    const { node_id } = await getJson<{ node_id: string }>(`${node.url}/health`);
    const recipient = fastKey();
    await register(node.url, recipient, node_id);
    const senders = Array.from({ length: CLIENTS }, () => fastKey());
    const solver = new PowSolver({ threads: availableParallelism() });
    await solver.start();
    const t0 = nowNs();
    const started = performance.now();
    const bodies: string[][] = [];
    try {
      for (let c = 0; c < CLIENTS; c++) {
        const mine: string[] = [];
        for (let i = 0; i < PER_CLIENT + WARMUP; i++)
          mine.push(
            await presign(
              solver,
              senders[c]!,
              recipient.pub,
              `benchmark message ${i} from client ${c}: the quick brown fox jumps over the lazy dog`,
              t0 + BigInt(i),
              difficulty,
            ),
          );
        bodies.push(mine);
      }
    } finally {
      await solver.stop();
    }
    log(
      `send: chat difficulty ${info.chat_pow_difficulty} (the development network's; about ${Math.round(expectedAttempts(difficulty)).toLocaleString('en-US')} attempts a message);` +
        ` pre-signed and solved ${CLIENTS * (PER_CLIENT + WARMUP)} envelopes in ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );

    const health = await loadGet(() => `${node.url}/health`, 3, CLIENTS);
    log(`baseline: GET /health on the same node, ${CLIENTS} clients: ${fmtRate(health.perSecond)} requests`);

    const agents = Array.from({ length: CLIENTS }, () => new Agent({ keepAlive: true, maxSockets: 1 }));
    const statuses: Record<number, number> = {};
    let firstError = '';
    const latencies: number[] = [];
    const drive = (from: number, to: number, count: boolean) =>
      Promise.all(
        bodies.map(async (mine, c) => {
          for (let i = from; i < to; i++) {
            const s = performance.now();
            const r = await post(`${node.url}/chat/send`, mine[i]!, agents[c]);
            if (!count) continue;
            latencies.push(performance.now() - s);
            statuses[r.status] = (statuses[r.status] ?? 0) + 1;
            if (r.status !== 200 && !firstError) firstError = `${r.status} ${r.body}`;
          }
        }),
      );
    await drive(0, WARMUP, false);
    const s = performance.now();
    await drive(WARMUP, WARMUP + PER_CLIENT, true);
    const seconds = (performance.now() - s) / 1000;
    for (const a of agents) a.destroy();
    const accepted = statuses[200] ?? 0;
    const rate = accepted / seconds;
    latencies.sort((a, b) => a - b);
    log(
      `send: ${accepted} messages accepted in ${seconds.toFixed(2)} s, ${CLIENTS} clients: ${fmtRate(rate)} messages` +
        ` (${ratio(rate, health.perSecond)} of GET /health); per request p50 ${ms(quantile(latencies, 0.5))}, p99 ${ms(quantile(latencies, 0.99))};` +
        ` all to one recipient, who held none before (a put costs more as an account's messages grow: see the store figures)` +
        (accepted !== CLIENTS * PER_CLIENT
          ? `; statuses ${JSON.stringify(statuses)}, first: ${firstError}`
          : ''),
    );
    return {
      chat_difficulty_attempts: expectedAttempts(difficulty),
      health_per_s: health.perSecond,
      send_per_s: rate,
      send_ratio: rate / health.perSecond,
      send_p50_ms: quantile(latencies, 0.5),
      send_p99_ms: quantile(latencies, 0.99),
      send_failed: CLIENTS * PER_CLIENT - accepted,
    };
  } finally {
    await node.stop();
  }
}

// ---- (b) a node with 100,000 messages: the child process --------------------------------------------

interface Memory {
  rss: number;
  heapUsed: number;
  external: number;
  rssAnon: number;
  rssFile: number;
}

type ChildRequest =
  | { cmd: 'memory' }
  | { cmd: 'fill'; n: number; hubSeed: string; sparseSeed: string }
  | { cmd: 'upkeep' }
  | { cmd: 'stop' };

/** The child's side: a node in this process, driven over IPC. argv: data directory. */
async function storeChild(dataDir: string): Promise<void> {
  const send = process.send!.bind(process);
  const node = new LedgerNode({ dataDir, apiPort: 0, rateLimit: false, p2p: false, verifyThreads: 0 });
  await node.start();
  const gc = (globalThis as { gc?: () => void }).gc;
  const memory = async (): Promise<Memory> => {
    for (let i = 0; i < 3; i++) {
      gc?.();
      await sleep(20);
    }
    const m = process.memoryUsage();
    const status = readFileSync('/proc/self/status', 'utf8');
    const kb = (f: string) => Number(new RegExp(`${f}:\\s+(\\d+)`).exec(status)?.[1] ?? 0) * 1024;
    return {
      rss: m.rss,
      heapUsed: m.heapUsed,
      external: m.external,
      rssAnon: kb('RssAnon'),
      rssFile: kb('RssFile'),
    };
  };
  process.on('message', (msg: ChildRequest) => {
    void (async () => {
      if (msg.cmd === 'memory') send({ memory: await memory(), gc: gc !== undefined });
      else if (msg.cmd === 'fill')
        send({
          seconds: await fill(node.chatStore, msg.n, hexToBytes(msg.hubSeed), hexToBytes(msg.sparseSeed)),
        });
      else if (msg.cmd === 'upkeep') send(await upkeep(node));
      else {
        await node.stop();
        process.exit(0);
      }
    })();
  });
  send({ url: node.url });
}

/**
 * Stores `n` signed messages straight into the chat store (no HTTP, no proof of work). The shape: a
 * hub account receives 10,000 (the per-account retention) from 1,000 senders, 10 each; the rest go
 * from those senders to 900 other accounts (the first of them `sparseSeed`'s), so no account passes
 * the retention and nothing is pruned.
 */
async function fill(
  store: ChatStore,
  n: number,
  hubSeed: Uint8Array,
  sparseSeed: Uint8Array,
): Promise<number> {
  const hub = fastKey(hubSeed);
  const senders = Array.from({ length: 1000 }, () => fastKey());
  const others = [fastKey(sparseSeed), ...Array.from({ length: 899 }, () => fastKey())];
  const HUB_MESSAGES = Math.min(n, store.retention.maxPerAccount);
  const t0 = nowNs() - BigInt(n);
  const started = performance.now();
  const BATCH = 1000;
  for (let done = 0; done < n; done += BATCH) {
    const puts: Promise<unknown>[] = [];
    for (let i = done; i < Math.min(n, done + BATCH); i++) {
      const from = senders[i % senders.length]!;
      const to = i < HUB_MESSAGES ? hub : others[i % others.length]!;
      const env: ChatEnvelope = {
        from: from.pub,
        to: to.pub,
        message: `stored message ${i}: the quick brown fox jumps over the lazy dog`,
        timestamp: t0 + BigInt(i),
      };
      const signature = bytesToHex(signBytesNode(chatEnvelopeIdBytes(env), from.seed));
      puts.push(store.put({ ...env, signature }, nowNs()));
    }
    await Promise.all(puts);
  }
  return (performance.now() - started) / 1000;
}

/**
 * The store's upkeep at its size, each the median of 5 on the node's thread: the hourly retention
 * pass when nothing is past it (the usual hour), and the admin's list of accounts with messages.
 */
async function upkeep(node: LedgerNode): Promise<{ pruneMs: number; accountsMs: number; accounts: number }> {
  const median = async (fn: () => unknown): Promise<number> => {
    const times: number[] = [];
    for (let i = 0; i < 5; i++) {
      const s = performance.now();
      await fn();
      times.push(performance.now() - s);
    }
    return times.sort((a, b) => a - b)[2]!;
  };
  const pruneMs = await median(async () => {
    if ((await node.chatStore.pruneOlderThan(nowNs())) !== 0) throw new Error('upkeep: messages pruned');
  });
  const accountsMs = await median(() => node.chatStore.accounts());
  return { pruneMs, accountsMs, accounts: node.chatStore.accounts().length };
}

interface StoreChild {
  url: string;
  ask<T>(req: ChildRequest): Promise<T>;
  stop(): Promise<void>;
}

async function startStoreChild(dataDir: string): Promise<StoreChild> {
  const proc: ChildProcess = fork(fileURLToPath(import.meta.url), [CHILD_FLAG, dataDir], {
    execArgv: [...process.execArgv, '--expose-gc'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const waiting: ((m: unknown) => void)[] = [];
  proc.on('message', (m) => waiting.shift()?.(m));
  const next = <T>() =>
    new Promise<T>((resolve, reject) => {
      waiting.push((m) => resolve(m as T));
      proc.once('exit', (code) => reject(new Error(`chat store child exited with ${code}`)));
    });
  const { url } = await next<{ url: string }>();
  return {
    url,
    ask<T>(req: ChildRequest) {
      const p = next<T>();
      proc.send(req);
      return p;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        if (proc.exitCode !== null) return resolve();
        proc.once('exit', () => resolve());
        proc.send({ cmd: 'stop' });
      }),
  };
}

/** Median time of `runs` reads of `path(query)`, each with a fresh ownership proof (not timed). */
async function timedReads(url: string, key: Key, path: string, runs: number) {
  const times: number[] = [];
  let total = '';
  let items = 0;
  for (let i = 0; i < runs; i++) {
    const q = await proof(url, key);
    const s = performance.now();
    const r = await fetch(`${url}${path}${path.includes('?') ? '&' : '?'}${q}`);
    const body = (await r.json()) as unknown[];
    times.push(performance.now() - s);
    if (r.status !== 200) throw new Error(`GET ${path}: ${r.status} ${JSON.stringify(body)}`);
    total = r.headers.get('x-total-count') ?? '';
    items = body.length;
  }
  times.sort((a, b) => a - b);
  return { median: quantile(times, 0.5), items, total };
}

/** Bytes of the files under `dir`. */
function diskBytes(dir: string): number {
  let total = 0;
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true }))
    if (e.isFile()) total += statSync(join(e.parentPath, e.name)).size;
  return total;
}

const mb = (b: number) => `${(b / 1024 / 1024).toFixed(1)} MB`;

async function benchStore(log: (l: string) => void, dir: string): Promise<Record<string, number>> {
  const N = Number(process.env.BENCH_CHAT_STORED ?? 100_000);
  const data = join(dir, 'store');
  const hub = fastKey();
  const sparse = fastKey();
  const child = await startStoreChild(data);
  let empty: Memory;
  let full: Memory;
  let fillSeconds: number;
  let gcOn: boolean;
  try {
    ({ memory: empty, gc: gcOn } = await child.ask<{ memory: Memory; gc: boolean }>({ cmd: 'memory' }));
    ({ seconds: fillSeconds } = await child.ask<{ seconds: number }>({
      cmd: 'fill',
      n: N,
      hubSeed: bytesToHex(hub.seed),
      sparseSeed: bytesToHex(sparse.seed),
    }));
    log(
      `store: ${N.toLocaleString('en-US')} signed messages stored through node.chatStore.put (not over HTTP; no proof of work) in ${fillSeconds.toFixed(1)} s` +
        ` (${fmtRate(N / fillSeconds)}); one account holds ${Math.min(N, 10_000).toLocaleString('en-US')} from 1,000 contacts`,
    );
    ({ memory: full } = await child.ask<{ memory: Memory }>({ cmd: 'memory' }));
  } finally {
    await child.stop();
  }
  // The same data directory in a fresh process: what a user's node holds after a restart.
  const again = await startStoreChild(data);
  try {
    const { memory: restarted } = await again.ask<{ memory: Memory }>({ cmd: 'memory' });
    const page = await timedReads(again.url, hub, '/chat/messages?limit=100', 15);
    const deep = await timedReads(again.url, hub, '/chat/messages?limit=100&offset=9900', 15);
    const contacts = await timedReads(again.url, hub, '/chat/contacts', 15);
    const sparsePage = await timedReads(again.url, sparse, '/chat/messages?limit=100', 15);
    const resume = await timedResume(again.url, sparse, Number(sparsePage.total), 5);
    const care = await again.ask<{ pruneMs: number; accountsMs: number; accounts: number }>({
      cmd: 'upkeep',
    });
    const { memory: afterReads } = await again.ask<{ memory: Memory }>({ cmd: 'memory' });
    const line = (what: string, m: Memory) =>
      `${what}: RSS ${mb(m.rss)} (${mb(m.rssAnon)} anonymous + ${mb(m.rssFile)} file pages), heap after GC ${mb(m.heapUsed)}, external ${mb(m.external)}`;
    log(`memory${gcOn ? '' : ' (no --expose-gc: heap before GC)'}:`);
    log(`  ${line('empty node', empty)}`);
    log(`  ${line(`same node after storing ${N.toLocaleString('en-US')}`, full)}`);
    log(`  ${line(`restarted on ${N.toLocaleString('en-US')} messages`, restarted)}`);
    log(`  ${line('restarted, after the reads below', afterReads)}`);
    log(`  data directory on disk: ${mb(diskBytes(data))}`);
    log(
      `  difference with ${N.toLocaleString('en-US')} messages: RSS ${mb(full.rss - empty.rss)}, heap ${mb(full.heapUsed - empty.heapUsed)} (same process);` +
        ` restarted RSS ${mb(restarted.rss - empty.rss)}`,
    );
    log(
      `reads at ${N.toLocaleString('en-US')} messages (median of 15, proof excluded): /chat/messages first page of ${page.items} (of ${page.total}) ${ms(page.median)},` +
        ` page at offset 9,900 ${ms(deep.median)}, /chat/contacts (${contacts.items} contacts) ${ms(contacts.median)}`,
    );
    log(
      `event stream from the start for an account with ${sparsePage.total} messages spread among ${N.toLocaleString('en-US')} (median of 5, proof excluded):` +
        ` all its events in ${ms(resume)}; its /chat/messages first page ${ms(sparsePage.median)} (the stream takes ${ratio(resume, sparsePage.median)} as long)`,
    );
    log(
      `upkeep at ${N.toLocaleString('en-US')} messages (median of 5, on the node's thread): the hourly retention pass with none past it ${ms(care.pruneMs)};` +
        ` the admin's list of the ${care.accounts.toLocaleString('en-US')} accounts with messages ${ms(care.accountsMs)}`,
    );
    return {
      stored: N,
      retention_pass_ms: care.pruneMs,
      accounts_list_ms: care.accountsMs,
      store_fill_s: fillSeconds,
      rss_empty_mb: empty.rss / 2 ** 20,
      rss_full_mb: full.rss / 2 ** 20,
      rss_restarted_mb: restarted.rss / 2 ** 20,
      heap_empty_mb: empty.heapUsed / 2 ** 20,
      heap_full_mb: full.heapUsed / 2 ** 20,
      heap_restarted_mb: restarted.heapUsed / 2 ** 20,
      messages_page_ms: page.median,
      messages_deep_page_ms: deep.median,
      contacts_ms: contacts.median,
      sparse_stream_ms: resume,
      sparse_page_ms: sparsePage.median,
    };
  } finally {
    await again.stop();
  }
}

// ---- (c) latency A -> B over two nodes ----------------------------------------------------------------

/** Counts `event: message` frames of an SSE stream, with their arrival times. */
function openEvents(url: string): Promise<{ arrivals: number[]; status: number; close(): void }> {
  return new Promise((resolve, reject) => {
    const req = httpGetRaw(url, (res) => {
      const arrivals: number[] = [];
      let buf = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        buf += c;
        let i: number;
        while ((i = buf.indexOf('\n\n')) >= 0) {
          const frame = buf.slice(0, i);
          buf = buf.slice(i + 2);
          if (frame.split('\n').includes('event: message')) arrivals.push(performance.now());
        }
      });
      resolve({ arrivals, status: res.statusCode ?? 0, close: () => req.destroy() });
    });
    req.on('error', reject);
  });
}

/**
 * Median time from opening `/chat/events` for `key`'s account (from its first message) to its
 * `expected`-th event, over `runs` streams (each with a fresh proof, not timed).
 */
async function timedResume(url: string, key: Key, expected: number, runs: number): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const q = await proof(url, key);
    const start = performance.now();
    const ev = await openEvents(`${url}/chat/events?${q}&last_event_id=0`);
    try {
      if (ev.status !== 200) throw new Error(`GET /chat/events: ${ev.status}`);
      if (!(await waitUntil(() => ev.arrivals.length >= expected, 60_000, 1)))
        throw new Error(`GET /chat/events: ${ev.arrivals.length} of ${expected} events in 60 s`);
      times.push(ev.arrivals[expected - 1]! - start);
    } finally {
      ev.close();
    }
  }
  times.sort((a, b) => a - b);
  return quantile(times, 0.5);
}

async function waitUntil(
  fn: () => Promise<boolean> | boolean,
  timeoutMs: number,
  everyMs = 50,
): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (await fn()) return true;
    await sleep(everyMs);
  }
  return false;
}

/**
 * Latency of chat delivery between nodes: send on node A, event on node B's `/chat/events` stream for
 * a recipient registered on B; one message at a time (no queueing), p50 and p99. Prints "skipped:
 * delivery between nodes not available" when A refuses a message for a recipient on another node.
 */
export async function benchLatencyAcrossNodes(
  log: (l: string) => void,
  dir: string,
  messages = Number(process.env.BENCH_CHAT_LATENCY_MESSAGES ?? 100),
): Promise<Record<string, number>> {
  const common = ['--api-port', '0', '--p2p-port', '0', '--p2p-bind', '127.0.0.1', '--rate-limit', 'off'];
  const quiet = ['--no-provide', '--log-level', 'warn'];
  const dirA = join(dir, 'latency-a');
  const nodes: SpawnedNode[] = [];
  try {
    const a = await spawnNode(['--data-dir', dirA, ...common, ...quiet]);
    nodes.push(a);
    const infoA = await getJson<{ listen_addrs: string[]; chat_pow_difficulty: string }>(`${a.url}/node`);
    const dial = infoA.listen_addrs.find((x) => x.includes('/ip4/127.0.0.1/'));
    if (!dial) throw new Error(`node A lists no loopback address: ${infoA.listen_addrs.join(', ')}`);
    const b = await spawnNode([
      '--data-dir',
      join(dir, 'latency-b'),
      '--genesis-dir',
      join(dirA, 'genesis'),
      '--dial',
      dial,
      ...common,
      ...quiet,
    ]);
    nodes.push(b);
    const peers = async (url: string) => (await getJson<{ peer_count: number }>(`${url}/node`)).peer_count;
    if (!(await waitUntil(async () => (await peers(a.url)) >= 1 && (await peers(b.url)) >= 1, 20_000)))
      throw new Error('the two nodes did not connect');
    const difficulty = parseDifficulty(infoA.chat_pow_difficulty);
    const { node_id: idB } = await getJson<{ node_id: string }>(`${b.url}/health`);
    const recipient = fastKey();
    const sender = fastKey();
    await register(b.url, recipient, idB);
    // A must know where the recipient lives (the directory travels between nodes).
    const known = await waitUntil(async () => {
      const r = await fetch(`${a.url}/directory/${recipient.pub}`);
      if (r.status !== 200) return false;
      return ((await r.json()) as { node_peer?: string }).node_peer === idB;
    }, 20_000);
    if (!known) {
      log(
        "latency A->B: skipped: delivery between nodes not available (node A never learnt the recipient's registration on B)",
      );
      return {};
    }
    const solver = new PowSolver({ threads: availableParallelism() });
    await solver.start();
    const bodies: string[] = [];
    const t0 = nowNs();
    try {
      for (let i = 0; i < messages + 1; i++)
        bodies.push(
          await presign(solver, sender, recipient.pub, `latency probe ${i}`, t0 + BigInt(i), difficulty),
        );
    } finally {
      await solver.stop();
    }
    const stream = await openEvents(`${b.url}/chat/events?${await proof(b.url, recipient)}`);
    if (stream.status !== 200) throw new Error(`B's /chat/events answered ${stream.status}`);
    try {
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      const latencies: number[] = [];
      const deliveries: Record<string, number> = {};
      for (let i = 0; i < bodies.length; i++) {
        const s = performance.now();
        const r = await post(`${a.url}/chat/send`, bodies[i]!, agent);
        if (r.status !== 200) {
          agent.destroy();
          log(
            `latency A->B: skipped: delivery between nodes not available (node A answered ${r.status} ${r.body.trim()} for a recipient registered on B)`,
          );
          return {};
        }
        const delivery = (JSON.parse(r.body) as { delivery?: string }).delivery ?? 'none';
        deliveries[delivery] = (deliveries[delivery] ?? 0) + 1;
        const arrived = await waitUntil(() => stream.arrivals.length > i, 30_000);
        if (!arrived) {
          agent.destroy();
          log(
            `latency A->B: skipped: delivery between nodes not available (A accepted message ${i} as ${delivery}, B's stream did not show it within 30 s)`,
          );
          return {};
        }
        // The first message opens the way (a libp2p stream): reported apart.
        latencies.push(stream.arrivals[i]! - s);
      }
      agent.destroy();
      const first = latencies.shift()!;
      latencies.sort((x, y) => x - y);
      log(
        `latency A->B (send on A to the event on B's /chat/events, one at a time, ${latencies.length} messages, chat difficulty ${infoA.chat_pow_difficulty} solved beforehand):` +
          ` p50 ${ms(quantile(latencies, 0.5))}, p99 ${ms(quantile(latencies, 0.99))}, first message ${ms(first)}; A's answers ${JSON.stringify(deliveries)}`,
      );
      return {
        latency_ab_p50_ms: quantile(latencies, 0.5),
        latency_ab_p99_ms: quantile(latencies, 0.99),
        latency_ab_first_ms: first,
      };
    } finally {
      stream.close();
    }
  } finally {
    for (const n of nodes.reverse()) await n.stop();
  }
}

export default async function benchChat(log: (line: string) => void): Promise<Record<string, number>> {
  const dir = mkdtempSync(join(tmpdir(), 'ledger-bench-chat-'));
  try {
    const a = await benchSend(log, dir);
    const b = await benchStore(log, dir);
    const c = await benchLatencyAcrossNodes(log, dir);
    return { ...a, ...b, ...c };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[2] === CHILD_FLAG) {
  if (process.argv[3] === undefined || process.send === undefined) {
    console.error(`usage: forked with an IPC channel: chat.ts ${CHILD_FLAG} DATA_DIR`);
    process.exit(2);
  }
  await storeChild(process.argv[3]);
}

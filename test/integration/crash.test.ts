import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { jsPowSolver } from '../../node-core/client/wallet.ts';
import { blockToJson, decodeBlock } from '../../node-core/protocol/block-json.ts';
import { type Block, ZERO_HASH } from '../../node-core/protocol/block.ts';
import { signBlock } from '../../node-core/protocol/block-sign.ts';
import { hexToBytes } from '../../node-core/protocol/hex.ts';
import { type JsonValue, parseJson, stringifyJson } from '../../node-core/protocol/json.ts';
import { type KeyPair, keyPairFromSeed, randomSeed } from '../../node-core/protocol/keys.ts';
import { type CliNode, quickNodeArgs, spawnCliNode } from '../helpers/cli-node.ts';

/**
 * Crash safety: a client streams valid blocks (claims, sends, receives, a few burns and mints) to a
 * node running as a child process while the node is SIGKILLed at random moments with requests in
 * flight, then restarted on the same data directory. Every block the node acknowledged (201) must
 * survive, every restart must find a consistent store (frontiers present, no chain gaps), and at the
 * end a replay of every chain must reproduce every balance, the pending set and the supply identity.
 */

const KILLS = 5;
const ACCOUNTS = 16;
const WORKERS = 8;
/** Traffic before each kill, in ms (a random point in this range). */
const KILL_AFTER: [number, number] = [500, 1500];
const READY_TIMEOUT_MS = 20_000;
/** Claims stay well inside the faucet's 1,000 XE per day, even counting claims whose answer was lost. */
const MAX_CLAIM = 5_000_000;
const MAX_CLAIMED = 700_000_000n;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const randInt = (lo: number, hi: number) => lo + Math.floor(Math.random() * (hi - lo + 1));

// ---- the node as a child process -------------------------------------------------------------------

type Instance = CliNode;

/** Error-level (50+) log lines of every instance, and each instance's start time. */
const errorLogs: string[] = [];
const startTimes: number[] = [];
const children: ChildProcess[] = [];

async function startNode(dataDir: string): Promise<Instance> {
  const started = Date.now();
  const node = await spawnCliNode(quickNodeArgs(dataDir), {
    readyTimeoutMs: READY_TIMEOUT_MS,
    onStderrLine: (line) => {
      try {
        if ((JSON.parse(line) as { level?: number }).level! >= 50) errorLogs.push(line);
      } catch {
        errorLogs.push(line); // not a log record: a crash trace or a usage error
      }
    },
  });
  children.push(node.child);
  startTimes.push(Date.now() - started);
  return node;
}

// ---- HTTP ------------------------------------------------------------------------------------------

interface Res {
  status: number;
  headers: Headers;
  body: JsonValue | undefined;
}

async function http(base: string, method: 'GET' | 'POST', path: string, body?: string): Promise<Res> {
  const res = await fetch(base + path, {
    method,
    body,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    signal: AbortSignal.timeout(15_000),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text === '' ? undefined : parseJson(text) };
}

async function getOk<T>(base: string, path: string): Promise<T> {
  const r = await http(base, 'GET', path);
  if (r.status !== 200) throw new Error(`GET ${path}: ${r.status} ${stringifyJson(r.body)}`);
  return r.body as T;
}

/** A whole chain, oldest first, page by page; X-Total-Count must agree on every page. */
async function fullChain(
  base: string,
  address: string,
): Promise<{ total: number; blocks: (Block & { finalized: boolean })[] }> {
  const blocks: (Block & { finalized: boolean })[] = [];
  let total = -1;
  for (;;) {
    const r = await http(base, 'GET', `/accounts/${address}/chain?offset=${blocks.length}&limit=1000`);
    if (r.status !== 200) throw new Error(`chain of ${address}: ${r.status}`);
    const t = Number(r.headers.get('x-total-count'));
    if (total !== -1 && t !== total) throw new Error(`chain of ${address} changed while listing`);
    total = t;
    const page = r.body as Record<string, unknown>[];
    for (const b of page) blocks.push({ ...decodeBlock(b), finalized: b.finalized === true });
    if (page.length === 0 || blocks.length >= total) return { total, blocks };
  }
}

async function allPages<T>(base: string, path: string): Promise<T[]> {
  const out: T[] = [];
  for (;;) {
    const page = await getOk<T[]>(base, `${path}?offset=${out.length}&limit=1000`);
    out.push(...page);
    if (page.length < 1000) return out;
  }
}

interface AccountRow {
  address: string;
  balances: Record<string, string>;
  block_count: number;
  frontier: string;
}

/**
 * What a restarted node must show before anything else: every account's frontier is a stored block,
 * its chain is gapless (heights 1..block_count, each block linking to the one before) and ends at
 * the frontier. Returns the chains.
 */
async function checkStructure(base: string): Promise<Map<string, (Block & { finalized: boolean })[]>> {
  const accounts = await allPages<AccountRow>(base, '/accounts');
  const frontiers = await getOk<Record<string, string>>(base, '/frontiers?limit=1000');
  expect(Object.keys(frontiers).length).toBe(Math.min(accounts.length, 1000));
  const chains = new Map<string, (Block & { finalized: boolean })[]>();
  for (const a of accounts) {
    expect(frontiers[a.address], `frontier of ${a.address}`).toBe(a.frontier);
    const f = await http(base, 'GET', `/blocks/${a.frontier}`);
    expect(f.status, `frontier block of ${a.address}`).toBe(200);
    const { total, blocks } = await fullChain(base, a.address);
    expect(total).toBe(a.block_count);
    expect(blocks.length, `chain of ${a.address} has a gap`).toBe(a.block_count);
    blocks.forEach((b, i) => {
      expect(b.account).toBe(a.address);
      expect(b.previous, `link at height ${i + 1} of ${a.address}`).toBe(
        i === 0 ? ZERO_HASH : blocks[i - 1]!.hash,
      );
    });
    expect(blocks.at(-1)?.hash).toBe(a.frontier);
    chains.set(a.address, blocks);
  }
  return chains;
}

// ---- the client's accounts -------------------------------------------------------------------------

interface Account {
  seed: Uint8Array;
  key: KeyPair;
  frontier: string;
  lastTimestamp: bigint;
  balances: Record<string, bigint>;
  claimed: bigint;
  /** The node's view is unknown (a request without an answer): reload before the next block. */
  dirty: boolean;
  busy: boolean;
  minter: boolean;
}

function newAccount(seed: Uint8Array, minter = false): Account {
  return {
    seed,
    key: keyPairFromSeed(seed),
    frontier: ZERO_HASH,
    lastTimestamp: 0n,
    balances: {},
    claimed: 0n,
    dirty: false,
    busy: false,
    minter,
  };
}

describe('crash safety: SIGKILL while blocks stream in', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'ledger-crash-'));

  afterAll(async () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  it(`keeps every acknowledged block and a consistent ledger across ${KILLS} SIGKILLs`, async () => {
    const t0 = Date.now();
    let inst = await startNode(dataDir);
    const keys = JSON.parse(readFileSync(join(dataDir, 'devnet-keys.json'), 'utf8')) as {
      minter: { seed_hex: string };
    };
    const networkId = (await getOk<{ network_id: string }>(inst.url, '/node')).network_id;

    // The node's current address, or a promise of it while it is down.
    let base: string | undefined = inst.url;
    let upWaiters: ((url: string) => void)[] = [];
    const nodeUrl = (): Promise<string> =>
      base !== undefined ? Promise.resolve(base) : new Promise((r) => upWaiters.push(r));

    const accounts = [
      ...Array.from({ length: ACCOUNTS }, () => newAccount(randomSeed())),
      newAccount(hexToBytes(keys.minter.seed_hex), true),
    ];
    const acked = new Map<string, Block>();
    const unexpected: string[] = [];
    const stats = { posted: 0, acked: 0, noAnswer: 0, retryable: 0, resyncs: 0 };
    let inFlight = 0;
    let running = true;

    async function resync(a: Account, url: string): Promise<void> {
      stats.resyncs++;
      const head = await http(url, 'GET', `/accounts/${a.key.address}/chain?offset=0&limit=1`);
      if (head.status === 404) {
        Object.assign(a, { frontier: ZERO_HASH, lastTimestamp: 0n, balances: {}, claimed: 0n });
      } else {
        const total = Number(head.headers.get('x-total-count'));
        const last = await getOk<Record<string, unknown>[]>(
          url,
          `/accounts/${a.key.address}/chain?offset=${total - 1}&limit=1`,
        );
        const b = decodeBlock(last[0]);
        const bal = await getOk<Record<string, string>>(url, `/accounts/${a.key.address}/balance`);
        a.frontier = b.hash!;
        a.lastTimestamp = b.timestamp;
        a.balances = Object.fromEntries(Object.entries(bal).map(([k, v]) => [k, BigInt(v)]));
      }
      a.dirty = false;
    }

    /** The next block for an account, built on its current state (undefined: nothing to do now). */
    async function nextBlock(a: Account, url: string): Promise<Block | undefined> {
      const xe = a.balances.XE ?? 0n;
      const fields = { account: a.key.address, previous: a.frontier };
      const opened = a.frontier !== ZERO_HASH;
      const roll = Math.random();
      let unsigned: Omit<Block, 'timestamp'> | undefined;
      if (a.minter) {
        if (!opened || roll < 0.6) {
          const amount = BigInt(randInt(1, 1_000_000));
          unsigned = {
            ...fields,
            type: 'mint',
            asset: 'XUSD',
            amount,
            balance: (a.balances.XUSD ?? 0n) + amount,
          };
        } else if (a.balances.XUSD) {
          const amount = BigInt(randInt(1, Number(a.balances.XUSD / 4n) + 1));
          const to = accounts[randInt(0, ACCOUNTS - 1)]!.key.address;
          unsigned = {
            ...fields,
            type: 'send',
            asset: 'XUSD',
            destination: to,
            amount,
            balance: a.balances.XUSD - amount,
          };
        }
      } else if (roll < 0.4 || !opened) {
        const pending = await getOk<{ hash: string; amount: string; asset: string }[]>(
          url,
          `/pending/${a.key.address}?limit=1`,
        );
        const p = pending[0];
        if (p) {
          const balance = (a.balances[p.asset] ?? 0n) + BigInt(p.amount);
          unsigned = { ...fields, type: 'receive', asset: p.asset, source: p.hash, balance };
        } else if (a.claimed < MAX_CLAIMED) {
          const amount = BigInt(randInt(1, MAX_CLAIM));
          unsigned = { ...fields, type: 'claim', asset: 'XE', amount, balance: xe + amount };
        }
      } else if (roll < 0.85 && xe > 3n) {
        const others = accounts.filter((o) => o !== a);
        const to = others[randInt(0, others.length - 1)]!.key.address;
        const amount = BigInt(randInt(1, Number(xe / 3n)));
        unsigned = { ...fields, type: 'send', asset: 'XE', destination: to, amount, balance: xe - amount };
      } else if (roll < 0.9 && xe > 10n) {
        const amount = BigInt(randInt(1, Number(xe / 10n)));
        unsigned = { ...fields, type: 'burn', asset: 'XE', amount, balance: xe - amount };
      } else if (a.claimed < MAX_CLAIMED) {
        const amount = BigInt(randInt(1, MAX_CLAIM));
        unsigned = { ...fields, type: 'claim', asset: 'XE', amount, balance: xe + amount };
      }
      if (!unsigned) return undefined;
      const now = BigInt(Date.now()) * 1_000_000n;
      const signed = signBlock(
        { ...unsigned, timestamp: now > a.lastTimestamp ? now : a.lastTimestamp },
        a.seed,
        networkId,
      );
      return { ...signed, pow_nonce: await jsPowSolver(hexToBytes(signed.hash), 2n) };
    }

    async function step(a: Account): Promise<void> {
      const url = await nodeUrl();
      try {
        if (a.dirty) await resync(a, url);
        const block = await nextBlock(a, url);
        if (!block) return;
        inFlight++;
        stats.posted++;
        let r: Res;
        try {
          r = await http(url, 'POST', `/blocks/${block.type}`, stringifyJson(blockToJson(block, 'node')));
        } finally {
          inFlight--;
        }
        if (r.status === 201) {
          stats.acked++;
          acked.set(block.hash!, block);
          a.frontier = block.hash!;
          a.lastTimestamp = block.timestamp;
          a.balances[block.asset] = block.balance;
          if (block.type === 'claim') a.claimed += block.amount!;
        } else {
          const body = r.body as { error?: string; retryable?: boolean } | undefined;
          if (r.status === 503 && body?.retryable === true) stats.retryable++;
          else unexpected.push(`${block.type} ${block.hash}: ${r.status} ${stringifyJson(r.body)}`);
          a.dirty = true;
        }
      } catch {
        // No answer (the node died mid-request, or is restarting): the outcome is unknown.
        stats.noAnswer++;
        a.dirty = true;
        await sleep(20);
      }
    }

    const worker = async () => {
      while (running) {
        const free = accounts.filter((x) => !x.busy);
        const a = free[randInt(0, free.length - 1)]!;
        a.busy = true;
        try {
          await step(a);
        } finally {
          a.busy = false;
        }
      }
    };

    const kills: { afterMs: number; inFlight: number; restartMs: number }[] = [];
    const workers = Array.from({ length: WORKERS }, worker);
    try {
      for (let k = 0; k < KILLS; k++) {
        const ackedBefore = stats.acked;
        const wait = randInt(...KILL_AFTER);
        await sleep(wait);
        // Each life of the node takes at least 100 blocks before it is killed (on a loaded machine
        // the random wait alone left too few: 441 acknowledged over 5 kills), within 20 s.
        const deadline = Date.now() + 20_000;
        while (stats.acked - ackedBefore < 100 && Date.now() < deadline) await sleep(10);
        // Kill while blocks are on the wire.
        while (inFlight === 0) await sleep(1);
        const inFlightAtKill = inFlight;
        base = undefined;
        inst.child.kill('SIGKILL');
        const exit = await inst.exited;
        expect(exit.signal).toBe('SIGKILL');
        const restartStarted = Date.now();
        inst = await startNode(dataDir);
        await checkStructure(inst.url);
        kills.push({ afterMs: wait, inFlight: inFlightAtKill, restartMs: Date.now() - restartStarted });
        base = inst.url;
        const waiting = upWaiters;
        upWaiters = [];
        for (const w of waiting) w(inst.url);
      }
      await sleep(1000);
    } finally {
      running = false;
      await Promise.all(workers);
    }
    const url = inst.url;
    console.log(
      `crash test: ${stats.posted} blocks posted, ${stats.acked} acknowledged, ${stats.noAnswer} without an answer, ` +
        `${stats.retryable} retryable 503s, ${stats.resyncs} resyncs; kills ${JSON.stringify(kills)}; ` +
        `starts (ms) ${JSON.stringify(startTimes)}`,
    );

    expect(kills.length).toBe(KILLS);
    expect(unexpected).toEqual([]);
    expect(errorLogs).toEqual([]);
    expect(stats.acked).toBeGreaterThan(100 * KILLS);

    // The store after the last crash: structure first, then every acknowledged block in its chain.
    const chains = await checkStructure(url);
    const inChain = new Map<string, Block>();
    for (const blocks of chains.values()) for (const b of blocks) inChain.set(b.hash!, b);
    const lost = [...acked.keys()].filter((h) => !inChain.has(h));
    expect(lost, 'acknowledged blocks missing from their chains').toEqual([]);
    for (const [hash, block] of acked) {
      const stored = inChain.get(hash)!;
      expect(stored.account).toBe(block.account);
      expect(stored.balance).toBe(block.balance);
    }
    // And each is served by hash.
    for (const hash of acked.keys()) {
      expect((await http(url, 'GET', `/blocks/${hash}`)).status).toBe(200);
    }

    // Replay every chain: balances per asset, block by block, and the pending set.
    const sends = new Map<string, Block>();
    for (const blocks of chains.values())
      for (const b of blocks) if (b.type === 'send') sends.set(b.hash!, b);
    const received = new Set<string>();
    const totals = {
      faucet: 0n,
      burned: 0n,
      minted: 0n,
      balances: { XE: 0n, XUSD: 0n } as Record<string, bigint>,
      blocks: 0,
    };
    for (const [address, blocks] of chains) {
      const bal: Record<string, bigint> = {};
      for (const b of blocks) {
        const amount = b.amount ?? 0n;
        const cur = bal[b.asset] ?? 0n;
        switch (b.type) {
          case 'genesis':
            bal[b.asset] = b.balance;
            break;
          case 'claim':
            totals.faucet += amount;
            bal[b.asset] = cur + amount;
            break;
          case 'mint':
            totals.minted += amount;
            bal[b.asset] = cur + amount;
            break;
          case 'receive': {
            const src = sends.get(b.source!);
            expect(src, `source of receive ${b.hash}`).toBeDefined();
            expect(src!.destination).toBe(address);
            expect(src!.asset).toBe(b.asset);
            expect(received.has(b.source!), `send ${b.source} received twice`).toBe(false);
            received.add(b.source!);
            bal[b.asset] = cur + src!.amount!;
            break;
          }
          case 'send':
            bal[b.asset] = cur - amount;
            break;
          case 'burn':
            totals.burned += amount;
            bal[b.asset] = cur - amount;
            break;
          default:
            throw new Error(`unexpected ${b.type} block in the replay`);
        }
        expect(b.balance, `balance field of ${b.type} ${b.hash}`).toBe(bal[b.asset]);
        totals.blocks++;
      }
      const reported = await getOk<Record<string, string>>(url, `/accounts/${address}/balance`);
      const replayed = Object.fromEntries(
        Object.entries(bal)
          .filter(([, v]) => v !== 0n)
          .map(([k, v]) => [k, v.toString()]),
      );
      expect(reported, `balances of ${address}`).toEqual(replayed);
      for (const [asset, v] of Object.entries(bal))
        totals.balances[asset] = (totals.balances[asset] ?? 0n) + v;
    }
    const expectedPending = [...sends.values()]
      .filter((s) => !received.has(s.hash!))
      .map((s) => ({
        hash: s.hash,
        from: s.account,
        to: s.destination,
        amount: s.amount!.toString(),
        asset: s.asset,
      }))
      .sort((x, y) => (x.hash! < y.hash! ? -1 : 1));
    const pending = (await allPages<Record<string, unknown>>(url, '/pending'))
      .map((p) => ({ hash: p.hash, from: p.from, to: p.to, amount: p.amount, asset: p.asset }))
      .sort((x, y) => ((x.hash as string) < (y.hash as string) ? -1 : 1));
    expect(pending).toEqual(expectedPending);
    const inFlightOf = (asset: string) =>
      expectedPending.filter((p) => p.asset === asset).reduce((s, p) => s + BigInt(p.amount), 0n);

    // The supply identity, and the node's totals against the replay.
    type AssetSupply = Record<string, string | boolean>;
    const supply = await getOk<{
      conserved: boolean;
      blocks: number;
      accounts: number;
      pending: number;
      assets: Record<string, AssetSupply>;
    }>(url, '/supply');
    const xe = supply.assets.XE!;
    const big = (v: string | boolean | undefined) => BigInt(v as string);
    expect(supply.conserved).toBe(true);
    expect(xe.conserved).toBe(true);
    expect(big(xe.genesis) + big(xe.faucet)).toBe(big(xe.balances) + big(xe.in_flight) + big(xe.burned));
    expect(big(xe.faucet)).toBe(totals.faucet);
    expect(big(xe.burned)).toBe(totals.burned);
    expect(big(xe.balances)).toBe(totals.balances.XE);
    expect(big(xe.in_flight)).toBe(inFlightOf('XE'));
    const xusd = supply.assets.XUSD!;
    expect(xusd.conserved).toBe(true);
    expect(big(xusd.minted)).toBe(totals.minted);
    expect(big(xusd.balances)).toBe(totals.balances.XUSD);
    expect(big(xusd.in_flight)).toBe(inFlightOf('XUSD'));
    expect(supply.blocks).toBe(totals.blocks);
    expect(supply.accounts).toBe(chains.size);
    expect(supply.pending).toBe(expectedPending.length);

    // Finality resumes after the crashes: every block ends up final.
    const deadline = Date.now() + 10_000;
    for (;;) {
      let open = 0;
      for (const address of chains.keys())
        open += (await fullChain(url, address)).blocks.filter((b) => !b.finalized).length;
      if (open === 0) break;
      if (Date.now() > deadline) throw new Error(`${open} blocks still unfinalized after the restarts`);
      await sleep(100);
    }

    // A clean stop still works on the crash-recovered store.
    inst.child.kill('SIGTERM');
    expect(await inst.exited).toEqual({ code: 0, signal: null });
    expect(errorLogs).toEqual([]);
    console.log(`crash test: ${((Date.now() - t0) / 1000).toFixed(1)} s in all`);
  }, 120_000);
});

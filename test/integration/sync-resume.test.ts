import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { blockHashBytesNode } from '../../node-core/fastpath/block-hash.ts';
import { signBytesNode } from '../../node-core/fastpath/ed25519.ts';
import { LedgerNode } from '../../node-core/node.ts';
import { type Block, ZERO_HASH } from '../../node-core/protocol/block.ts';
import { bytesToHex } from '../../node-core/protocol/hex.ts';
import { keyPairFromSeed } from '../../node-core/protocol/keys.ts';

/**
 * Catch-up resumes after kill -9 (issue #18): a node joining a network of CHAINS x PER_CHAIN blocks
 * runs as a child process and is SIGKILLed in the middle of its catch-up, then restarted on the same
 * data directory. The restarted node pulls exactly the blocks it did not hold (its `chains` answers
 * carry no block it had: sync's pulled and duplicate counters say so), ends with every block of
 * every chain, each once, at the heights and frontiers of the source, and all final.
 */

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const CHAINS = 80;
const PER_CHAIN = 50;
const TOTAL = CHAINS * PER_CHAIN + 1; // and the genesis block

interface Child {
  proc: ChildProcess;
  url: string;
  /** Log records (JSON lines on stderr) so far. */
  logs: Record<string, unknown>[];
  exited: Promise<void>;
}

const children: ChildProcess[] = [];
const dirs: string[] = [];

function tmp(prefix: string): string {
  const d = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(d);
  return d;
}

/** `ledger-node` as a child process (the pinned Node 22 runs the TypeScript sources), until ready. */
async function startChild(args: string[]): Promise<Child> {
  const proc = spawn('node', [join(ROOT, 'bin/ledger-node.js'), ...args], {
    cwd: ROOT,
    env: { ...process.env, PATH: `${join(ROOT, 'node_modules/.bin')}${delimiter}${process.env.PATH ?? ''}` },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(proc);
  const logs: Record<string, unknown>[] = [];
  const errors: string[] = [];
  createInterface({ input: proc.stderr! }).on('line', (line) => {
    try {
      logs.push(JSON.parse(line) as Record<string, unknown>);
    } catch {
      errors.push(line);
    }
  });
  const exited = new Promise<void>((r) => proc.once('exit', () => r()));
  const url = await new Promise<string>((res, rej) => {
    const timer = setTimeout(() => rej(new Error('node not ready after 30 s')), 30_000);
    createInterface({ input: proc.stdout! }).on('line', (line) => {
      const m = /^ledger-node ready: API (http:\/\/\S+)/.exec(line);
      if (m) {
        clearTimeout(timer);
        res(m[1]!);
      }
    });
    void exited.then(() => {
      clearTimeout(timer);
      rej(new Error(`node exited before ready: ${errors.slice(-10).join('\n')}`));
    });
  });
  return { proc, url, logs, exited };
}

async function get<T>(url: string): Promise<T> {
  const r = await fetch(url);
  return (await r.json()) as T;
}

async function waitFor(what: string, ms: number, cond: () => Promise<boolean>): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

interface NodeInfo {
  block_count: number;
  listen_addrs: string[];
  sync: {
    state: string;
    blocks_known: number;
    blocks_done: number;
    blocks_left: number;
    estimate_seconds: number | null;
    blocks_pulled: number;
    duplicates: number;
    pages: number;
  };
}

/** The source ledger, written in-process: CHAINS accounts, a claim then sends on each. */
async function fillSource(dataDir: string): Promise<void> {
  const node = new LedgerNode({
    dataDir,
    apiPort: 0,
    powDifficulty: 0n,
    rateLimit: false,
    verifyThreads: 1,
    p2p: false,
    uiDir: false,
  });
  await node.start();
  try {
    const networkId = node.statechain.networkId;
    const t0 = node.now();
    const seal = (b: Block, seed: Uint8Array): Block => {
      const hash = blockHashBytesNode(b, networkId);
      return { ...b, hash: bytesToHex(hash), signature: bytesToHex(signBytesNode(hash, seed)) };
    };
    const chains: Block[][] = [];
    for (let c = 0; c < CHAINS; c++) {
      const seed = new Uint8Array(randomBytes(32));
      const kp = keyPairFromSeed(seed);
      let balance = 1_000_000n;
      const blocks: Block[] = [];
      let prev = seal(
        {
          type: 'claim',
          account: kp.address,
          previous: ZERO_HASH,
          balance,
          timestamp: t0,
          asset: 'XE',
          amount: balance,
          pub_key: kp.pub_key,
        },
        seed,
      );
      blocks.push(prev);
      for (let i = 1; i < PER_CHAIN; i++) {
        balance -= 1n;
        prev = seal(
          {
            type: 'send',
            account: kp.address,
            previous: prev.hash!,
            balance,
            timestamp: t0 + BigInt(i),
            asset: 'XE',
            destination: bytesToHex(randomBytes(32)),
            amount: 1n,
          },
          seed,
        );
        blocks.push(prev);
      }
      chains.push(blocks);
    }
    // Chains side by side: each block of a chain waits for the one before it.
    await Promise.all(
      chains.map(async (blocks) => {
        for (const b of blocks) await node.ledger.submit(b, { live: false });
      }),
    );
    await node.consensus.idle();
    expect(node.ledger.unfinalizedAccounts()).toEqual([]);
  } finally {
    await node.stop();
  }
}

describe('catch-up interrupted by kill -9 (real child processes)', () => {
  let source: Child;
  let sourceDir: string;

  beforeAll(async () => {
    sourceDir = join(tmp('sync-resume-src-'), 'node');
    await fillSource(sourceDir);
    source = await startChild([
      '--data-dir',
      sourceDir,
      '--api-port',
      '0',
      '--p2p-port',
      '0',
      '--p2p-bind',
      '127.0.0.1',
      '--rate-limit',
      'off',
      '--log-level',
      'warn',
    ]);
  }, 120_000);

  afterAll(async () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    await new Promise((r) => setTimeout(r, 200));
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('resumes where it stopped: pulls only what it lacked, ends with every block once, all final', async () => {
    const info = await get<NodeInfo>(`${source.url}/node`);
    expect(info.block_count).toBe(TOTAL);
    const dial = info.listen_addrs[0]!;
    const dataDir = join(tmp('sync-resume-join-'), 'node');
    const args = [
      '--data-dir',
      dataDir,
      '--genesis-dir',
      join(sourceDir, 'genesis'),
      '--dial',
      dial,
      '--api-port',
      '0',
      '--p2p-port',
      '0',
      '--p2p-bind',
      '127.0.0.1',
      '--rate-limit',
      'off',
      '--log-level',
      'info',
    ];

    // First run: killed once it holds some of the blocks but not all.
    const first = await startChild(args);
    let seen = 0;
    let midway: NodeInfo['sync'] | undefined;
    await waitFor('the first blocks of the catch-up', 60_000, async () => {
      const n = await get<NodeInfo>(`${first.url}/node`);
      seen = n.block_count;
      if (n.sync.state === 'syncing' && n.sync.blocks_done > 0 && n.sync.blocks_left > 0) midway = n.sync;
      // Killed once a first page is reported done, preferably while the next is partly committed
      // (its groups of 25 are; the page is not done), else before the last page.
      return midway !== undefined && (seen > n.sync.blocks_done + 1 || seen >= TOTAL - PER_CHAIN * 20);
    });
    first.proc.kill('SIGKILL');
    await first.exited;
    expect(seen).toBeLessThan(TOTAL); // killed mid-catch-up, not after it
    // Progress in /node while it ran: what it knew, did and had left add up, with an estimate.
    expect(midway).toBeDefined();
    expect(midway!.blocks_known).toBe(TOTAL - 1);
    expect(midway!.blocks_done + midway!.blocks_left).toBe(TOTAL - 1);
    expect(midway!.estimate_seconds).toBeGreaterThanOrEqual(0);
    const firstPlan = first.logs.find((l) => String(l.msg).startsWith('catching up:'));
    expect(firstPlan?.blocks_left).toBe(TOTAL - 1);

    // Second run on the same data directory.
    const second = await startChild(args);
    await waitFor('every block held and final after the restart', 90_000, async () => {
      const [n, ready] = await Promise.all([
        get<NodeInfo>(`${second.url}/node`),
        get<{ unfinalized_positions: number }>(`${second.url}/ready`),
      ]);
      return n.block_count === TOTAL && ready.unfinalized_positions === 0;
    });
    const plan = second.logs.find((l) => String(l.msg).startsWith('catching up:'));
    const left = plan?.blocks_left as number;
    // What it held when killed (at least what it had shown) is not asked for again ...
    expect(left).toBeGreaterThan(0);
    expect(left).toBeLessThanOrEqual(TOTAL - seen);
    const after = (await get<NodeInfo>(`${second.url}/node`)).sync;
    // ... and the pages it received carried exactly the blocks it lacked, none it held.
    expect(after.blocks_pulled).toBe(left);
    expect(after.duplicates).toBe(0);
    expect(after.pages).toBeGreaterThan(0);
    console.log(
      `sync resume: killed showing ${seen} of ${TOTAL} blocks; the restart pulled ${after.blocks_pulled} in ${after.pages} pages, ${after.duplicates} already held`,
    );

    // Every chain as the source has it: same height and frontier, so each block is there once.
    const list = async (url: string) =>
      new Map(
        (
          await get<{ address: string; block_count: number; frontier: string }[]>(
            `${url}/accounts?limit=1000`,
          )
        ).map((a) => [a.address, `${a.block_count}:${a.frontier}`]),
      );
    const [mine, theirs] = await Promise.all([list(second.url), list(source.url)]);
    expect(mine.size).toBe(CHAINS + 1);
    expect(mine).toEqual(theirs);
    // The same supply (when and how fast each node computed it aside).
    const supply = async (url: string) => {
      const {
        computed_at: _at,
        duration_ms: _ms,
        ...rest
      } = await get<Record<string, unknown>>(`${url}/supply`);
      return rest;
    };
    const [s1, s2] = await Promise.all([supply(second.url), supply(source.url)]);
    expect(s1.conserved).toBe(true);
    expect(s1).toEqual(s2);
    second.proc.kill('SIGTERM');
    await second.exited;
  }, 240_000);
});

import { expect } from 'vitest';
import { blockHashBytes, type Block, ZERO_HASH } from '../../node-core/protocol/block.ts';
import { blockToJson } from '../../node-core/protocol/block-json.ts';
import { signBlock, signBlockMultisig } from '../../node-core/protocol/block-sign.ts';
import { bytesToHex, hexToBytes } from '../../node-core/protocol/hex.ts';
import { type JsonValue, parseJson, stringifyJson } from '../../node-core/protocol/json.ts';
import { type KeyPair, keyPairFromSeed, randomSeed, signBytes } from '../../node-core/protocol/keys.ts';
import { parseDifficulty, powHash, solvePowJs } from '../../node-core/protocol/pow.ts';
import type { TestNode } from './node.ts';
import { type RawResponse, rawHttp } from './raw-http.ts';

/**
 * Building blocks for HTTP integration tests of the ledger: raw HTTP, blocks signed and solved by
 * hand (valid or deliberately broken), and whole-ledger snapshots to prove a rejection changed nothing.
 */

export interface HttpResult {
  status: number;
  headers: Headers;
  text: string;
  /** Lossless JSON body (bigint for big integers), undefined when the body is not JSON. */
  body: JsonValue | undefined;
}

/** Network facts a block builder needs, read from the node's API. */
export interface Kit {
  url: string;
  networkId: string;
  difficulty: bigint;
  /** The node's own representative address. */
  nodeAddress: string;
}

export async function kitOf(t: TestNode): Promise<Kit> {
  const info = (await http(t.node.url, 'GET', '/node')).body as Record<string, JsonValue>;
  return {
    url: t.node.url,
    networkId: info.network_id as string,
    difficulty: parseDifficulty(info.pow_difficulty as string),
    nodeAddress: info.address as string,
  };
}

/** fetch with a lossless JSON body; `body` is sent as is when it is a string. */
export async function http(
  url: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<HttpResult> {
  const h: Record<string, string> = { ...headers };
  if (body !== undefined) h['content-type'] ??= 'application/json';
  const res = await fetch(`${url}${path}`, {
    method,
    headers: h,
    body: body === undefined ? undefined : typeof body === 'string' ? body : stringifyJson(body),
  });
  const text = await res.text();
  let parsed: JsonValue | undefined;
  try {
    parsed = text === '' ? undefined : parseJson(text);
  } catch {
    parsed = undefined;
  }
  return { status: res.status, headers: res.headers, text, body: parsed };
}

/** node:http request, for headers fetch will not let us set (Host, Origin); a body goes chunked. */
export function rawRequest(
  url: string,
  opts: { method?: string; path: string; headers?: Record<string, string>; body?: string; setHost?: boolean },
): Promise<RawResponse> {
  const u = new URL(url);
  return rawHttp(Number(u.port), {
    ...opts,
    host: u.hostname,
    chunked: true,
    noHost: opts.setHost === false,
  });
}

// ---- blocks -------------------------------------------------------------------------------------

/** Solves the proof of work of a hashed block. */
export function withPow(block: Block, kit: Pick<Kit, 'difficulty'>): Block {
  if (kit.difficulty === 0n) return { ...block, pow_nonce: 0n };
  const found = solvePowJs(hexToBytes(block.hash!), kit.difficulty, 0n, 10_000_000);
  if (!found) throw new Error('no proof-of-work nonce found');
  return { ...block, pow_nonce: found.nonce };
}

/** A nonce that FAILS the difficulty for this block (searching up from 0). */
export function failingNonce(block: Block, difficulty: bigint): bigint {
  const target = hexToBytes(block.hash!);
  for (let n = 0n; ; n++) if (powHash(target, n) < difficulty) return n;
}

/** Signs as a wallet does (pub_key on opening blocks only) and solves the proof of work. */
export function sealed(block: Block, seed: Uint8Array, kit: Pick<Kit, 'networkId' | 'difficulty'>): Block {
  return withPow(signBlock(block, seed, kit.networkId), kit);
}

/**
 * Hashes the block exactly as given (pub_key kept or left out as the caller set it), signs the hash
 * with `seed` (no signature without one) and solves the proof of work.
 */
export function sealedRaw(
  block: Block,
  seed: Uint8Array | undefined,
  kit: Pick<Kit, 'networkId' | 'difficulty'>,
): Block {
  const out: Block = { ...block };
  delete out.signature;
  delete out.hash;
  const hash = blockHashBytes(out, kit.networkId);
  if (seed) out.signature = bytesToHex(signBytes(hash, seed));
  return withPow({ ...out, hash: bytesToHex(hash) }, kit);
}

/** Multisig: every seed signs the hash; proof of work solved. */
export function sealedMulti(
  block: Block,
  seeds: Uint8Array[],
  kit: Pick<Kit, 'networkId' | 'difficulty'>,
): Block {
  return withPow(signBlockMultisig(block, seeds, kit.networkId), kit);
}

export const nowNs = (): bigint => BigInt(Date.now()) * 1_000_000n;
export const HOUR_NS = 3_600_000_000_000n;
export const XE = 1_000_000n;

/** Submits a block to `POST /blocks/{type}` (node form JSON). */
export function submit(kit: Pick<Kit, 'url'>, block: Block, type: string = block.type): Promise<HttpResult> {
  return http(kit.url, 'POST', `/blocks/${type}`, blockToJson(block, 'node'));
}

/**
 * An account driven by hand: tracks frontier, last timestamp and balances so a test can build the
 * next valid block, or a deliberately broken one, and only advances on acceptance.
 */
export class Account {
  readonly seed: Uint8Array;
  readonly key: KeyPair;
  frontier = ZERO_HASH;
  lastTimestamp = 0n;
  readonly balances: Record<string, bigint> = {};
  private readonly kit: Kit;

  constructor(kit: Kit, seed: Uint8Array = randomSeed()) {
    this.kit = kit;
    this.seed = seed;
    this.key = keyPairFromSeed(seed);
  }

  get address(): string {
    return this.key.address;
  }

  bal(asset = 'XE'): bigint {
    return this.balances[asset] ?? 0n;
  }

  /** The next block's timestamp: now, never earlier than the chain's last one. */
  nextTimestamp(): bigint {
    const t = nowNs();
    return t > this.lastTimestamp ? t : this.lastTimestamp;
  }

  /** An unsigned block extending this account's chain. */
  draft(fields: Omit<Block, 'account' | 'previous' | 'timestamp'> & Partial<Block>): Block {
    return { account: this.address, previous: this.frontier, timestamp: this.nextTimestamp(), ...fields };
  }

  /** A signed, solved block extending the chain (not submitted). */
  build(fields: Omit<Block, 'account' | 'previous' | 'timestamp'> & Partial<Block>): Block {
    return sealed(this.draft(fields), this.seed, this.kit);
  }

  /** Marks an accepted block as the chain's new head. */
  advance(block: Block): void {
    this.frontier = block.hash!;
    this.lastTimestamp = block.timestamp;
    this.balances[block.asset] = block.balance;
  }

  /** Submits a block that must be accepted (201), then advances. */
  async commit(block: Block): Promise<Block> {
    const r = await submit(this.kit, block);
    if (r.status !== 201) throw new Error(`block refused (${r.status}): ${r.text}`);
    this.advance(block);
    return block;
  }

  claimBlock(amount: bigint, balance = this.bal('XE') + amount): Block {
    return this.build({ type: 'claim', asset: 'XE', amount, balance });
  }

  sendBlock(destination: string, amount: bigint, asset = 'XE', balance = this.bal(asset) - amount): Block {
    return this.build({ type: 'send', asset, destination, amount, balance });
  }

  receiveBlock(source: string, amount: bigint, asset = 'XE', balance = this.bal(asset) + amount): Block {
    return this.build({ type: 'receive', asset, source, balance });
  }

  claim(amount: bigint): Promise<Block> {
    return this.commit(this.claimBlock(amount));
  }

  send(destination: string, amount: bigint, asset = 'XE'): Promise<Block> {
    return this.commit(this.sendBlock(destination, amount, asset));
  }

  receive(send: Block): Promise<Block> {
    return this.commit(this.receiveBlock(send.hash!, send.amount!, send.asset));
  }

  /** Loads the chain head and balances from the node (for the genesis treasury, a restarted node...). */
  async sync(): Promise<void> {
    const head = await http(this.kit.url, 'GET', `/accounts/${this.address}/chain?limit=1`);
    if (head.status === 404) return;
    const total = Number(head.headers.get('x-total-count'));
    const last = await http(
      this.kit.url,
      'GET',
      `/accounts/${this.address}/chain?offset=${total - 1}&limit=1`,
    );
    const b = (last.body as Record<string, JsonValue>[])[0]!;
    this.frontier = b.hash as string;
    this.lastTimestamp = BigInt(b.timestamp as number | bigint);
    const bal = (await http(this.kit.url, 'GET', `/accounts/${this.address}/balance`)).body as Record<
      string,
      string
    >;
    for (const k of Object.keys(this.balances)) delete this.balances[k];
    for (const [k, v] of Object.entries(bal)) this.balances[k] = BigInt(v);
  }
}

// ---- snapshots and assertions -------------------------------------------------------------------

export interface LedgerSnapshot {
  accounts: JsonValue | undefined;
  pending: JsonValue | undefined;
  blockCount: JsonValue | undefined;
  accountCount: JsonValue | undefined;
}

/** Everything a rejected block could have changed: accounts (balances, heights, frontiers), pending. */
export async function snapshot(kit: Pick<Kit, 'url'>): Promise<LedgerSnapshot> {
  const [accounts, pending, node] = await Promise.all([
    http(kit.url, 'GET', '/accounts?limit=1000'),
    http(kit.url, 'GET', '/pending?limit=1000'),
    http(kit.url, 'GET', '/node'),
  ]);
  const n = node.body as Record<string, JsonValue>;
  return {
    accounts: accounts.body,
    pending: pending.body,
    blockCount: n.block_count,
    accountCount: n.accounts,
  };
}

/** `GET /supply` once its 2-second cache covers every block the node holds. */
export async function freshSupply(kit: Pick<Kit, 'url'>): Promise<Record<string, JsonValue>> {
  const end = Date.now() + 5000;
  for (;;) {
    const node = (await http(kit.url, 'GET', '/node')).body as Record<string, JsonValue>;
    const supply = (await http(kit.url, 'GET', '/supply')).body as Record<string, JsonValue>;
    if (supply.blocks === node.block_count) return supply;
    if (Date.now() > end) throw new Error('supply report never caught up');
    await new Promise((r) => setTimeout(r, 100));
  }
}

export interface Rejection {
  status: 400 | 503;
  /** The reason after "block rejected: " (exact string, or a pattern for the whole message). */
  reason: string | RegExp;
}

/**
 * Submits a block that must be rejected and proves it changed nothing: status, the node-form body
 * with the matching retryable flag, the ledger snapshot before and after, the block not stored.
 */
export async function expectRejected(
  kit: Pick<Kit, 'url'>,
  block: Block,
  want: Rejection,
  type: string = block.type,
): Promise<void> {
  const before = await snapshot(kit);
  const r = await submit(kit, block, type);
  const body = r.body as { error?: string; retryable?: boolean };
  expect({ status: r.status, retryable: body?.retryable }, r.text).toEqual({
    status: want.status,
    retryable: want.status === 503,
  });
  expect(Object.keys(body).sort()).toEqual(['error', 'retryable']);
  if (typeof want.reason === 'string') expect(body.error).toBe(`block rejected: ${want.reason}`);
  else expect(body.error).toMatch(want.reason);
  expect(r.headers.get('content-type')).toMatch(/^application\/json/);
  expect(await snapshot(kit)).toEqual(before);
  if (block.hash && /^[0-9a-f]{64}$/.test(block.hash)) {
    expect((await http(kit.url, 'GET', `/blocks/${block.hash}`)).status).toBe(404);
  }
}

/** Waits until every block of the account's chain is finalized. */
export async function waitFinal(kit: Pick<Kit, 'url'>, address: string, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  for (;;) {
    const r = await http(kit.url, 'GET', `/accounts/${address}/chain?limit=1000`);
    if (r.status === 200 && (r.body as { finalized: boolean }[]).every((b) => b.finalized)) return;
    if (Date.now() > end) throw new Error(`chain of ${address} never finalized`);
    await new Promise((res) => setTimeout(res, 20));
  }
}

/** Finalized flags of an account's chain, oldest first. */
export async function finalFlags(kit: Pick<Kit, 'url'>, address: string): Promise<boolean[]> {
  const r = await http(kit.url, 'GET', `/accounts/${address}/chain?limit=1000`);
  return (r.body as { finalized: boolean }[]).map((b) => b.finalized);
}

/** The conflicts still voting (settled ones stay listed an hour as `resolved`); all, or an account's. */
export async function openConflicts(kit: Kit, account?: string): Promise<Record<string, JsonValue>[]> {
  const r = await http(kit.url, 'GET', account ? `/conflicts/${account}` : '/conflicts');
  if (r.status === 404) return [];
  return (r.body as Record<string, JsonValue>[]).filter((c) => c.status === 'voting');
}

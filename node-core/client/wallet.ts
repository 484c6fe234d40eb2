import { type Block, ZERO_HASH } from '../protocol/block.ts';
import { signBlock } from '../protocol/block-sign.ts';
import { hexToBytes } from '../protocol/hex.ts';
import { keyPairFromSeed, type KeyPair } from '../protocol/keys.ts';
import { solvePowJs } from '../protocol/pow.ts';
import type { LedgerClient, PendingSend } from './client.ts';

/**
 * A single-key account driven through the API: it builds each block from the account's current
 * state (previous = frontier, balance = the exact post-block balance), signs it, solves its proof of
 * work and submits it. Writes are serialized, since two concurrent blocks would fork the chain.
 * The node never signs: the seed stays here.
 */
export type PowSolver = (target: Uint8Array, difficulty: bigint) => Promise<bigint>;

export interface WalletOptions {
  networkId: string;
  difficulty: bigint;
  /** Proof-of-work solver; default: the slow pure-JS one (fine for tiny test difficulties). */
  solvePow?: PowSolver;
  /** Clock in Unix nanoseconds. */
  now?: () => bigint;
}

export const jsPowSolver: PowSolver = async (target, difficulty) => {
  const found = solvePowJs(target, difficulty, undefined, 50_000_000);
  if (!found) throw new Error('no proof-of-work nonce found: difficulty too high for the pure-JS solver');
  return found.nonce;
};

export class Wallet {
  readonly key: KeyPair;
  private readonly seed: Uint8Array;
  private readonly client: LedgerClient;
  private readonly opts: WalletOptions;
  private frontier = ZERO_HASH;
  private lastTimestamp = 0n;
  readonly balances: Record<string, bigint> = {};
  private chainLock: Promise<unknown> = Promise.resolve();

  constructor(client: LedgerClient, seed: Uint8Array, opts: WalletOptions) {
    this.client = client;
    this.seed = seed;
    this.key = keyPairFromSeed(seed);
    this.opts = opts;
  }

  /** Connects to a node, learning its network id and difficulty, and loads the account's state. */
  static async open(client: LedgerClient, seed: Uint8Array, solvePow?: PowSolver): Promise<Wallet> {
    const info = await client.node();
    const w = new Wallet(client, seed, {
      networkId: info.network_id,
      difficulty: info.pow_difficulty,
      solvePow,
    });
    await w.refresh();
    return w;
  }

  get address(): string {
    return this.key.address;
  }

  /** Reloads frontier and balances from the node. */
  async refresh(): Promise<void> {
    const head = await this.client.chain(this.address, 0, 1);
    if (!head || head.total === 0) {
      this.frontier = ZERO_HASH;
      return;
    }
    const last = await this.client.chain(this.address, head.total - 1, 1);
    const b = last!.blocks[0]!.block;
    this.frontier = b.hash!;
    this.lastTimestamp = b.timestamp;
    const bal = await this.client.balances(this.address);
    for (const k of Object.keys(this.balances)) delete this.balances[k];
    Object.assign(this.balances, bal);
  }

  private now(): bigint {
    const t = this.opts.now ? this.opts.now() : BigInt(Date.now()) * 1_000_000n;
    return t > this.lastTimestamp ? t : this.lastTimestamp;
  }

  /** Builds, signs and solves a block without submitting it (benchmarks pre-solve blocks). */
  async prepare(fields: Omit<Block, 'account' | 'previous' | 'timestamp'>): Promise<Block> {
    const unsigned: Block = {
      ...fields,
      account: this.address,
      previous: this.frontier,
      timestamp: this.now(),
    };
    const signed = signBlock(unsigned, this.seed, this.opts.networkId);
    const solve = this.opts.solvePow ?? jsPowSolver;
    const nonce =
      this.opts.difficulty === 0n ? 0n : await solve(hexToBytes(signed.hash), this.opts.difficulty);
    return { ...signed, pow_nonce: nonce };
  }

  /** Marks a prepared block as applied locally (after the node accepted it, or to chain pre-solved ones). */
  advance(block: Block): void {
    this.frontier = block.hash!;
    this.lastTimestamp = block.timestamp;
    this.balances[block.asset] = block.balance;
  }

  /**
   * Delegates this account's XE weight to a representative (an address). Delegation rides on a
   * block, so it takes effect with the account's next block.
   */
  delegateTo(representative: string): void {
    this.nextRepresentative = representative;
  }

  private nextRepresentative: string | undefined;

  private write(fields: Omit<Block, 'account' | 'previous' | 'timestamp'>): Promise<Block> {
    const run = async () => {
      const rep = this.nextRepresentative;
      const block = await this.prepare(rep ? { ...fields, representative: rep } : fields);
      if (rep === this.nextRepresentative) this.nextRepresentative = undefined;
      await this.client.submit(block);
      this.advance(block);
      return block;
    };
    const p = this.chainLock.then(run, run);
    this.chainLock = p.catch(() => {});
    return p;
  }

  /**
   * Writes any block type of this account (lease, lease_renew, lease_cancel, ...): `fields` without
   * account, previous and timestamp, which come from the chain; `balance` is the caller's post-block
   * balance of the block's asset, computed from `balances`.
   */
  writeBlock(fields: Omit<Block, 'account' | 'previous' | 'timestamp'>): Promise<Block> {
    return this.write(fields);
  }

  private bal(asset: string): bigint {
    return this.balances[asset] ?? 0n;
  }

  claim(amount: bigint): Promise<Block> {
    return this.write({ type: 'claim', asset: 'XE', amount, balance: this.bal('XE') + amount });
  }

  send(destination: string, amount: bigint, asset = 'XE', memo?: string): Promise<Block> {
    return this.write({ type: 'send', asset, destination, amount, memo, balance: this.bal(asset) - amount });
  }

  receive(p: PendingSend): Promise<Block> {
    return this.write({
      type: 'receive',
      asset: p.asset,
      source: p.hash,
      balance: this.bal(p.asset) + p.amount,
    });
  }

  /** Receives every pending send; returns the receive blocks. */
  async receiveAll(): Promise<Block[]> {
    const out: Block[] = [];
    for (const p of await this.client.pending(this.address)) out.push(await this.receive(p));
    return out;
  }

  burn(amount: bigint, memo?: string): Promise<Block> {
    return this.write({ type: 'burn', asset: 'XE', amount, memo, balance: this.bal('XE') - amount });
  }

  mint(amount: bigint): Promise<Block> {
    return this.write({ type: 'mint', asset: 'XUSD', amount, balance: this.bal('XUSD') + amount });
  }
}

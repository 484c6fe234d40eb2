import type { LedgerClient, PendingSend } from '../../../node-core/client/client.ts';
import { type Block, ZERO_HASH } from '../../../node-core/protocol/block.ts';
import { hexToBytes } from '../../../node-core/protocol/hex.ts';

import type { Keystore } from '../keystore/keystore.ts';
import { runPow } from '../pow/activity.ts';
import type { PowEngine } from '../pow/engine.ts';
import { fetchBalances } from './balances.ts';
import { groupedUnits } from './format.ts';

/**
 * Writes to an account's chain from the renderer: reads the account's state from the node, builds the
 * block (previous = frontier, balance = the exact post-block balance), has the keystore sign it,
 * solves its proof of work (engine.ts, cancellable, with progress), submits it. Writes to one account
 * run one at a time: two blocks on the same frontier would conflict.
 */
export class InsufficientFundsError extends Error {
  readonly spendable: bigint;
  constructor(asset: string, amount: bigint, spendable: bigint, balance: bigint) {
    const pendingPart =
      balance > spendable
        ? ` (balance ${groupedUnits(balance)} ${asset}, of which ${groupedUnits(balance - spendable)} not yet final)`
        : '';
    super(
      `Insufficient spendable funds: ${groupedUnits(amount)} ${asset} asked, ${groupedUnits(spendable)} ${asset} spendable${pendingPart}.`,
    );
    this.name = 'InsufficientFundsError';
    this.spendable = spendable;
  }
}

interface ChainHead {
  frontier: string;
  lastTimestamp: bigint;
}

type BlockFields = Omit<Block, 'account' | 'previous' | 'timestamp'>;

export interface WriterDeps {
  client: LedgerClient;
  keystore: Keystore;
  engine: () => PowEngine;
  /** Clock in Unix nanoseconds. */
  now?: () => bigint;
}

export class AccountWriter {
  private readonly deps: WriterDeps;
  private readonly queues = new Map<string, Promise<unknown>>();

  constructor(deps: WriterDeps) {
    this.deps = deps;
  }

  private now(): bigint {
    return this.deps.now ? this.deps.now() : BigInt(Date.now()) * 1_000_000n;
  }

  private async head(address: string): Promise<ChainHead> {
    const { client } = this.deps;
    const first = await client.chain(address, 0, 1);
    if (!first || first.total === 0) return { frontier: ZERO_HASH, lastTimestamp: 0n };
    const last = await client.chain(address, first.total - 1, 1);
    const b = last?.blocks[0]?.block;
    if (!b?.hash) throw new Error('the node returned an incomplete chain');
    return { frontier: b.hash, lastTimestamp: b.timestamp };
  }

  /** Runs `fn` after every earlier write to the same account has settled. */
  private serialize<T>(address: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.queues.get(address) ?? Promise.resolve();
    const p = prev.then(fn, fn);
    const tail = p.catch(() => {});
    this.queues.set(address, tail);
    void tail.then(() => {
      if (this.queues.get(address) === tail) this.queues.delete(address);
    });
    return p;
  }

  /**
   * Builds (from fresh state), signs, solves and submits one block. A transient rejection (503,
   * retryable: another block took the frontier first) is retried once from fresh state.
   */
  private write(
    address: string,
    label: string,
    build: (balances: Record<string, bigint>, spendable: Record<string, bigint>) => BlockFields,
    signal?: AbortSignal,
  ): Promise<Block> {
    return this.serialize(address, async () => {
      const { client, keystore } = this.deps;
      const info = await client.node();
      for (let attempt = 0; ; attempt++) {
        const [head, bal] = await Promise.all([this.head(address), fetchBalances(client, address)]);
        const fields = build(bal.balances, bal.spendable);
        const now = this.now();
        const unsigned: Block = {
          ...fields,
          account: address,
          previous: head.frontier,
          timestamp: now > head.lastTimestamp ? now : head.lastTimestamp,
        };
        const signed = keystore.signBlock(address, unsigned, info.network_id);
        const nonce =
          info.pow_difficulty === 0n
            ? 0n
            : await runPow(
                this.deps.engine(),
                label,
                hexToBytes(signed.hash, 32),
                info.pow_difficulty,
                signal,
              );
        const block: Block = { ...signed, pow_nonce: nonce };
        try {
          await client.submit(block);
          return block;
        } catch (e) {
          const retryable = (e as { retryable?: boolean }).retryable === true;
          if (!retryable || attempt >= 1) throw e;
          await new Promise((r) => setTimeout(r, 300));
        }
      }
    });
  }

  claim(address: string, amount: bigint, label: string, signal?: AbortSignal): Promise<Block> {
    return this.write(
      address,
      label,
      (balances) => ({ type: 'claim', asset: 'XE', amount, balance: (balances.XE ?? 0n) + amount }),
      signal,
    );
  }

  /** A send; refused before signing when it exceeds the spendable funds. */
  send(
    address: string,
    to: { destination: string; amount: bigint; asset: string; memo?: string },
    label: string,
    signal?: AbortSignal,
  ): Promise<Block> {
    return this.write(
      address,
      label,
      (balances, spendable) => {
        const bal = balances[to.asset] ?? 0n;
        const free = spendable[to.asset] ?? 0n;
        if (to.amount > free) throw new InsufficientFundsError(to.asset, to.amount, free, bal);
        return {
          type: 'send',
          asset: to.asset,
          destination: to.destination,
          amount: to.amount,
          ...(to.memo ? { memo: to.memo } : {}),
          balance: bal - to.amount,
        };
      },
      signal,
    );
  }

  receive(address: string, p: PendingSend, label: string, signal?: AbortSignal): Promise<Block> {
    return this.write(
      address,
      label,
      (balances) => ({
        type: 'receive',
        asset: p.asset,
        source: p.hash,
        balance: (balances[p.asset] ?? 0n) + p.amount,
      }),
      signal,
    );
  }
}

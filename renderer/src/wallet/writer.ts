import type { LedgerClient, PendingSend } from '../../../node-core/client/client.ts';
import { type Attestation, type Block, ZERO_HASH } from '../../../node-core/protocol/block.ts';
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
  /** `fmt` writes amounts (the send form passes the person's locale: "1.000,5" in German). */
  constructor(
    asset: string,
    amount: bigint,
    spendable: bigint,
    balance: bigint,
    fmt: (micro: bigint) => string = groupedUnits,
  ) {
    const pendingPart =
      balance > spendable
        ? ` (balance ${fmt(balance)} ${asset}, of which ${fmt(balance - spendable)} ${asset} is waiting for confirmation)`
        : '';
    super(
      `Not enough funds: ${fmt(amount)} ${asset} asked, ${fmt(spendable)} ${asset} available to send${pendingPart}.`,
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

  // ---- lease blocks (consumer chain, XUSD) ---------------------------------------------------------

  /** Debits `cost` XUSD, refused before signing when the spendable XUSD does not cover it. */
  private static debitXusd(
    balances: Record<string, bigint>,
    spendable: Record<string, bigint>,
    cost: bigint,
  ): bigint {
    const bal = balances.XUSD ?? 0n;
    const free = spendable.XUSD ?? 0n;
    if (cost > free) throw new InsufficientFundsError('XUSD', cost, free, bal);
    return bal - cost;
  }

  /** A `lease` block: escrows the offer's exact cost for its provider, with the lease's access key. */
  lease(address: string, terms: LeaseTerms, label: string, signal?: AbortSignal): Promise<Block> {
    return this.write(
      address,
      label,
      (balances, spendable) => ({
        type: 'lease',
        asset: 'XUSD',
        destination: terms.provider,
        amount: terms.cost,
        vcpus: terms.vcpus,
        memory_mb: terms.memory_mb,
        disk_gb: terms.disk_gb,
        duration: terms.duration,
        access_pub_key: terms.access_pub_key,
        certificate_hash: terms.certificate_hash,
        balance: AccountWriter.debitXusd(balances, spendable, terms.cost),
      }),
      signal,
    );
  }

  /** A `lease_renew` block: extends an accepted lease at the provider's current certificate price. */
  renewLease(address: string, r: RenewTerms, label: string, signal?: AbortSignal): Promise<Block> {
    return this.write(
      address,
      label,
      (balances, spendable) => ({
        type: 'lease_renew',
        asset: 'XUSD',
        source: r.lease_hash,
        amount: r.cost,
        duration: r.duration,
        certificate_hash: r.certificate_hash,
        attestations: r.attestations,
        locked_r: r.locked_r,
        locked_payout_cap: r.locked_payout_cap,
        locked_twap_milli: r.locked_twap_milli,
        balance: AccountWriter.debitXusd(balances, spendable, r.cost),
      }),
      signal,
    );
  }

  /** A `lease_cancel` block: refunds the escrow of a lease nobody accepted. */
  cancelLease(
    address: string,
    leaseHash: string,
    refund: bigint,
    label: string,
    signal?: AbortSignal,
  ): Promise<Block> {
    return this.write(
      address,
      label,
      (balances) => ({
        type: 'lease_cancel',
        asset: 'XUSD',
        source: leaseHash,
        balance: (balances.XUSD ?? 0n) + refund,
      }),
      signal,
    );
  }

  /** A `lease_force_settle` block: refunds the escrow once the settle window has passed unsettled. */
  forceSettleLease(
    address: string,
    leaseHash: string,
    refund: bigint,
    attestations: Attestation[],
    label: string,
    signal?: AbortSignal,
  ): Promise<Block> {
    return this.write(
      address,
      label,
      (balances) => ({
        type: 'lease_force_settle',
        asset: 'XUSD',
        source: leaseHash,
        attestations,
        balance: (balances.XUSD ?? 0n) + refund,
      }),
      signal,
    );
  }
}

/** What a `lease` block carries (from the offer taken and the access key made for it). */
export interface LeaseTerms {
  provider: string;
  cost: bigint;
  vcpus: bigint;
  memory_mb: bigint;
  disk_gb: bigint;
  duration: bigint;
  access_pub_key: string;
  certificate_hash: string;
}

/** What a `lease_renew` block carries. */
export interface RenewTerms {
  lease_hash: string;
  cost: bigint;
  duration: bigint;
  certificate_hash: string;
  attestations: Attestation[];
  locked_r: bigint;
  locked_payout_cap: bigint;
  locked_twap_milli: bigint;
}

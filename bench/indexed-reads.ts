import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { CertificateBook } from '../node-core/leasing/certificate-book.ts';
import {
  accountKey,
  addRecordBalances,
  chainKey,
  decodePending,
  encodeAccount,
  encodePending,
  isChainKey,
  isPendingKey,
  isRecordKey,
  pendingKey,
} from '../node-core/ledger/codec.ts';
import { LedgerReads } from '../node-core/ledger/reads.ts';
import { bytesToHex, hexToBytes } from '../node-core/protocol/hex.ts';
import { LeaseBook } from '../node-core/leasing/lease-book.ts';
import {
  decodeLease,
  LEASE_STATES,
  type LeaseRecord,
  type LeaseRenewal,
  renewalEmission,
} from '../node-core/leasing/records.ts';
import { decodeCertificate, type PerformanceCertificate } from '../node-core/protocol/certificate.ts';
import { parseJson, stringifyJson } from '../node-core/protocol/json.ts';
import { Store } from '../node-core/store/store.ts';
import { median } from './measure.ts';

/**
 * `npm run bench -- indexed`: reads of the lease and certificate tables that ask for one party's
 * records, in a real store, against the pass over every record that answered them before those
 * tables had an index (issue #18), measured in the same run on the same store.
 *
 * Leases: one provider's in a state (a provider's tick, twice every 5 s; the marketplace's capacity
 * for each provider it lists), every accepted one (the archive sweep, every 10 s on every node) and
 * the first page of all, on BENCH_LEASES leases (default 50,000) of 500 providers. Leases are never
 * deleted, so the table grows with the network's history. Certificates: one provider's newest (the
 * marketplace asks for its own with every request it sees and every 10 s), among BENCH_CERTIFICATES
 * (default 20,000) of 200 providers (up to 256 are kept per provider).
 *
 * The accounts table (each account's record, then a chain entry a block, then the sends pending to
 * it): a page of accounts deep in the listing (`GET /accounts?offset=`), the first page of pending
 * sends when few are pending (`GET /pending`) and the supply report's pass (`GET /supply`), on
 * BENCH_ACCOUNTS accounts (default 20,000; every 20th with 500 blocks, the others 1-10) with 100
 * sends pending in all; they skip long runs of chain entries, where they walked every key.
 */
const LEASES = Math.max(1_000, Number(process.env.BENCH_LEASES ?? 50_000));
const CERTIFICATES = Math.max(1_000, Number(process.env.BENCH_CERTIFICATES ?? 20_000));
const PROVIDERS = 500;
const CERT_PROVIDERS = 200;
/** A week of a renewal a minute. */
const HELD_RENEWALS = 10_080;
const ACCOUNTS = Math.max(1_000, Number(process.env.BENCH_ACCOUNTS ?? 20_000));
/** Most accounts have a few blocks, some very many (an exchange's, a faucet's, a busy provider's). */
const blocksOf = (i: number) => (i % 20 === 0 ? 500 : 1 + (i % 10));
const SHAPE = 'accounts (every 20th of 500 blocks, the others 1-10)';
const REPEATS = 7;

const party = (i: number, tag: string) => (tag + i.toString(16).padStart(8, '0')).padEnd(64, '0');

function lease(i: number): LeaseRecord {
  // Most of a network's leases are over; a few per provider are open.
  const state = i % 23 === 0 ? 'accepted' : i % 47 === 1 ? 'created' : LEASE_STATES[2 + (i % 4)]!;
  return {
    lease_hash: (i * 2654435761).toString(16).padStart(64, '0'),
    state,
    consumer: party(i % 3_000, 'c'),
    provider: party(i % PROVIDERS, 'b'),
    vcpus: 2n,
    memory_mb: 2048n,
    disk_gb: 20n,
    duration: 3_600n,
    cost: 1_000_000n,
    stake: 100_000n,
    start_time: 1_700_000_000_000_000_000n + BigInt(i),
    certificate_hash: 'e'.repeat(64),
    settled: state !== 'accepted' && state !== 'created',
    locked_r: 5n,
    locked_payout_cap: 10n,
    locked_twap_milli: 1_000n,
    renewal_count: 0,
    renewed_cost: 0n,
    renewal_emission: 0n,
    created_at: 1_700_000_000_000_000_000n,
    accept_hash: 'f'.repeat(64),
  };
}

function certificate(i: number): PerformanceCertificate {
  const issued = 1_700_000_000_000_000_000n + BigInt(i) * 1_000_000_000n;
  return {
    provider: party(i % CERT_PROVIDERS, 'b'),
    provider_pub_key: party(i % CERT_PROVIDERS, 'd'),
    seed: '5'.repeat(64),
    workload_version: 1n,
    iterations: 1_000_000n,
    work_proof: '6'.repeat(64),
    score: 1.25,
    start_attestation_root: '7'.repeat(64),
    end_attestation_root: '8'.repeat(64),
    start_median: issued - 60_000_000_000n,
    end_median: issued,
    issued_at: issued,
    expires_at: issued + 7n * 86_400_000_000_000n,
    price_multiplier_milli: 1_000n,
    signature: '9'.repeat(128),
    hash: (i * 2654435761 + 1).toString(16).padStart(64, '0'),
  };
}

/** Median milliseconds of `fn` over REPEATS runs, and what it returned. */
function time<T>(fn: () => T): { ms: number; out: T } {
  const ms: number[] = [];
  let out!: T;
  for (let r = 0; r < REPEATS; r++) {
    const t0 = performance.now();
    out = fn();
    ms.push(performance.now() - t0);
  }
  return { ms: median(ms), out };
}

export default async function benchIndexedReads(
  log: (line: string) => void,
): Promise<Record<string, number>> {
  const dir = mkdtempSync(join(tmpdir(), 'ledger-bench-indexed-'));
  const store = Store.open({ path: join(dir, 'store.lmdb') });
  try {
    const book = new LeaseBook(store);
    await store.root.transaction(() => {
      for (let i = 0; i < LEASES; i++) book.put(lease(i));
    });
    const certificates = new CertificateBook(store);
    for (let i = 0; i < CERTIFICATES; i++) await certificates.add(certificate(i));
    await store.root.transaction(() => {
      for (let i = 0; i < ACCOUNTS; i++) {
        const address = party(i, 'a');
        const balances = { XE: 1_000_000n + BigInt(i) };
        store.accounts.putSync(
          accountKey(address),
          encodeAccount({
            height: blocksOf(i),
            frontier: 'f'.repeat(64),
            balances,
            representative: 'e'.repeat(64),
            final_height: blocksOf(i),
            final_balances: balances,
            last_timestamp: 1n,
          }),
        );
        // As the ledger indexes an account beside its first record.
        store.accountIndex.putSync(hexToBytes(address, 32), new Uint8Array(0));
        for (let h = 1; h <= blocksOf(i); h++)
          store.accounts.putSync(chainKey(address, h), new Uint8Array(40).fill(h));
        if (i % Math.floor(ACCOUNTS / 100) === 0)
          store.accounts.putSync(
            pendingKey(address, party(i, 'd')),
            encodePending({ from: party(i + 1, 'a'), amount: 5n, asset: 'XE', timestamp: 1n }),
          );
      }
    });
    const reads = new LedgerReads(store);
    /** The former way: every key of the accounts table walked, those wanted kept. */
    const walk = function* () {
      for (const { key, value } of store.accounts.getRange({})) if (!isChainKey(key)) yield { key, value };
    };
    const deep = ACCOUNTS - 100;
    /** The former way: every record decoded, then filtered. */
    const scan = (keep: (r: LeaseRecord) => boolean) => {
      const out: LeaseRecord[] = [];
      for (const { value } of store.leases.getRange({})) {
        const r = decodeLease(value);
        if (keep(r)) out.push(r);
      }
      return out;
    };
    const provider = party(7, 'b');
    const now = certificate(CERTIFICATES - 1).issued_at;
    // A lease held a week by a renewal a minute: its renewals beside the record, and the record as
    // it was stored with all of them in it (the former way, decoded as the baseline).
    const held = { ...lease(1), lease_hash: 'a'.repeat(64) };
    const renewals: LeaseRenewal[] = Array.from({ length: HELD_RENEWALS }, (_, k) => ({
      renew_hash: party(k, 'e'),
      duration: 60n,
      cost: 1_000n,
      start_time: 1_700_000_000_000_000_000n + BigInt(k) * 60_000_000_000n,
      locked_r: 5n,
      locked_payout_cap: 10n,
      locked_twap_milli: 1_000n,
    }));
    await store.root.transaction(() => {
      book.put({
        ...held,
        renewal_count: renewals.length,
        renewed_cost: renewals.reduce((a, r) => a + r.cost, 0n),
        renewal_emission: renewals.reduce((a, r) => a + renewalEmission(r), 0n),
      });
      renewals.forEach((r, i) => book.putRenewal(held.lease_hash, i, r));
    });
    const { renewal_count: _c, renewed_cost: _s, renewal_emission: _e, ...heldRest } = held;
    const heldBefore = stringifyJson({ ...heldRest, renewals });
    const cases: {
      name: string;
      key: string;
      of?: string;
      /** How the two ways are named in the line (default: indexed, reading every record). */
      how?: [string, string];
      indexed: () => unknown[];
      scanned: () => unknown[];
    }[] = [
      {
        name: "one provider's accepted leases (its tick)",
        key: 'provider_state',
        indexed: () => book.list({ provider, state: 'accepted' }, 0, 10_000).leases,
        scanned: () => scan((r) => r.provider === provider && r.state === 'accepted'),
      },
      {
        name: 'every accepted lease (the archive sweep)',
        key: 'state',
        indexed: () => book.list({ state: 'accepted' }, 0, Number.MAX_SAFE_INTEGER).leases,
        scanned: () => scan((r) => r.state === 'accepted'),
      },
      {
        name: 'the first page of all leases (GET /leases)',
        key: 'page',
        indexed: () => book.list({}, 0, 100).leases,
        scanned: () => scan(() => true).slice(0, 100),
      },
      {
        name: "one provider's newest valid certificate (the marketplace's own)",
        key: 'certificate',
        of: `${CERTIFICATES.toLocaleString('en')} certificates`,
        indexed: () => [certificates.newestValid(provider, now)],
        scanned: () => {
          // The former way: every certificate decoded, the provider's sorted newest first.
          const mine: PerformanceCertificate[] = [];
          for (const { value } of store.certificates.getRange({})) {
            const c = decodeCertificate(parseJson(value));
            if (c.provider === provider) mine.push(c);
          }
          mine.sort((a, b) => (a.issued_at > b.issued_at ? -1 : a.issued_at < b.issued_at ? 1 : 0));
          return [mine.find((c) => c.expires_at >= now)];
        },
      },
      {
        name: `a page of accounts at offset ${deep.toLocaleString('en')} (GET /accounts)`,
        key: 'accounts_offset',
        of: `${ACCOUNTS.toLocaleString('en')} ${SHAPE}`,
        indexed: () => reads.listAccounts(deep, 100).map((a) => a.address),
        scanned: () => {
          // The former way: every key walked (keys alone) to the offset, then the page.
          const out: string[] = [];
          let skipped = 0;
          for (const key of store.accounts.getKeys({})) {
            if (!isRecordKey(key) || skipped++ < deep) continue;
            out.push(bytesToHex(key.subarray(0, 32)));
            if (out.length >= 100) break;
          }
          return out;
        },
      },
      {
        name: 'the first page of pending sends, 100 among them (GET /pending)',
        key: 'pending',
        of: `${ACCOUNTS.toLocaleString('en')} ${SHAPE}`,
        indexed: () => reads.listPending(0, 100).map((p) => p.hash),
        scanned: () => {
          const out: string[] = [];
          for (const { key } of walk()) if (isPendingKey(key)) out.push(bytesToHex(key.subarray(33, 65)));
          return out.slice(0, 100);
        },
      },
      {
        name: 'the supply report (GET /supply)',
        key: 'supply',
        of: `${ACCOUNTS.toLocaleString('en')} ${SHAPE}`,
        indexed: () => {
          const h = reads.sumHoldings();
          return [h.balances.XE, h.inFlight.XE];
        },
        scanned: () => {
          const balances: Record<string, bigint> = {};
          let pending = 0n;
          for (const { key, value } of walk()) {
            if (isRecordKey(key)) addRecordBalances(value, balances);
            else if (isPendingKey(key)) pending += decodePending(value).amount;
          }
          return [balances.XE, pending];
        },
      },
    ];
    cases.push({
      name: 'the answer to a certificate request (the 48 newest, unexpired first; every peer asks every 2 min)',
      key: 'cert_answer',
      of: `${CERTIFICATES.toLocaleString('en')} certificates`,
      indexed: () => certificates.newest(now, 48).map((c) => c.hash),
      scanned: () =>
        // The former way: every certificate decoded and sorted.
        [...store.certificates.getRange({})]
          .map(({ value }) => decodeCertificate(parseJson(value)))
          .sort((a, b) => {
            const live = Number(b.expires_at >= now) - Number(a.expires_at >= now);
            if (live !== 0) return live;
            return a.issued_at > b.issued_at ? -1 : a.issued_at < b.issued_at ? 1 : 0;
          })
          .slice(0, 48)
          .map((c) => c.hash),
    });
    cases.push({
      name: `a lease held a week (${HELD_RENEWALS.toLocaleString('en')} renewals): its record read (every lease block, tick and listing reads it)`,
      key: 'held_lease',
      of: 'the store',
      how: ['with its renewals apart', 'with them in it (parsed alone)'],
      indexed: () => [book.get(held.lease_hash)!.renewal_count],
      scanned: () => [(parseJson(heldBefore) as { renewals: unknown[] }).renewals.length],
    });
    const out: Record<string, number> = { leases: LEASES, certificates: CERTIFICATES, accounts: ACCOUNTS };
    for (const c of cases) {
      const a = time(c.indexed);
      const b = time(c.scanned);
      if (!isDeepStrictEqual(a.out, b.out)) throw new Error(`${c.name}: the index and the pass disagree`);
      log(
        `${c.name}, of ${c.of ?? `${LEASES.toLocaleString('en')} leases`}: ${a.ms.toFixed(2)} ms ${c.how?.[0] ?? 'indexed'}` +
          ` against ${b.ms.toFixed(1)} ms ${c.how?.[1] ?? 'reading every record'} (medians of ${REPEATS}):` +
          ` ${(b.ms / a.ms).toFixed(0)}x faster, ${a.out.length} found`,
      );
      out[`${c.key}_indexed_ms`] = a.ms;
      out[`${c.key}_scan_ms`] = b.ms;
      out[`${c.key}_speedup`] = b.ms / a.ms;
    }
    return out;
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

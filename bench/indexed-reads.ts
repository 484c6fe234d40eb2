import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { CertificateBook } from '../node-core/leasing/certificate-book.ts';
import { LeaseBook } from '../node-core/leasing/lease-book.ts';
import { decodeLease, LEASE_STATES, type LeaseRecord } from '../node-core/leasing/records.ts';
import { decodeCertificate, type PerformanceCertificate } from '../node-core/protocol/certificate.ts';
import { parseJson } from '../node-core/protocol/json.ts';
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
 */
const LEASES = Math.max(1_000, Number(process.env.BENCH_LEASES ?? 50_000));
const CERTIFICATES = Math.max(1_000, Number(process.env.BENCH_CERTIFICATES ?? 20_000));
const PROVIDERS = 500;
const CERT_PROVIDERS = 200;
const REPEATS = 7;

const party = (i: number, tag: string) => (tag + i.toString(16)).padEnd(64, '0');

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
    renewals: [],
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
    const cases: {
      name: string;
      key: string;
      of?: string;
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
    ];
    const out: Record<string, number> = { leases: LEASES, certificates: CERTIFICATES };
    for (const c of cases) {
      const a = time(c.indexed);
      const b = time(c.scanned);
      if (!isDeepStrictEqual(a.out, b.out)) throw new Error(`${c.name}: the index and the pass disagree`);
      log(
        `${c.name}, of ${c.of ?? `${LEASES.toLocaleString('en')} leases`}: ${a.ms.toFixed(2)} ms indexed against ${b.ms.toFixed(1)} ms` +
          ` decoding every record (medians of ${REPEATS}): ${(b.ms / a.ms).toFixed(0)}x faster, ${a.out.length} found`,
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

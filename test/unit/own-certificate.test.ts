import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { signBytesNode, verifyBytesNode } from '../../node-core/fastpath/ed25519.ts';
import type { BenchmarkOptions, BenchmarkRun } from '../../node-core/leasing/benchmark.ts';
import { localAttestation } from '../../node-core/leasing/local-attestation.ts';
import {
  OwnCertificate,
  type OwnCertificateDeps,
  OwnCertificateError,
} from '../../node-core/leasing/own-certificate.ts';
import type { Attestation } from '../../node-core/protocol/block.ts';
import {
  attestationMerkleRoot,
  benchmarkEndSubject,
  CERTIFICATE_VALIDITY_NS,
  certificateSeed,
  type PerformanceCertificate,
  verifyCertificateContent,
  type Workload,
} from '../../node-core/protocol/certificate.ts';
import { bytesToHex, hexToBytes } from '../../node-core/protocol/hex.ts';
import { generateKeyPair } from '../../node-core/protocol/keys.ts';

/**
 * The own-certificate component over fake parts: an in-memory book, the node's key as the only
 * timekeeper, a benchmark that finishes when the test says so, and vitest's fake clock.
 */
const NETWORK = 'devnet-unit';
const WORKLOAD: Workload = { workload_version: 3n, iterations: 1000n, table_entries: 16, reads: 10 };
const DAY_MS = 86_400_000;
const T0 = 1_800_000_000_000n * 1_000_000n;

function memoryBook() {
  const certs = new Map<string, PerformanceCertificate>();
  return {
    certs,
    async add(c: PerformanceCertificate) {
      if (certs.has(c.hash)) return false;
      certs.set(c.hash, c);
      return true;
    },
    newestValid(provider: string, now: bigint) {
      return [...certs.values()]
        .filter((c) => c.provider === provider && c.expires_at >= now)
        .sort((a, b) => (a.issued_at > b.issued_at ? -1 : 1))[0];
    },
  };
}

/** A benchmark run the test finishes (or fails) by hand; records what it was given. */
function fakeBenchmark() {
  const runs: { work: { seed: Uint8Array }; opts: BenchmarkOptions; stopped: boolean }[] = [];
  let finish: ((elapsed: number) => void) | undefined;
  let fail: ((e: Error) => void) | undefined;
  const start = (work: { seed: Uint8Array }, opts: BenchmarkOptions = {}): BenchmarkRun => {
    const entry = { work, opts, stopped: false };
    runs.push(entry);
    const result = new Promise<{ work_proof: string; elapsed_seconds: number }>((resolve, reject) => {
      finish = (elapsed) => {
        for (const f of [0.1, 0.3, 0.6, 0.8]) opts.onProgress?.(f);
        opts.onProgress?.(1);
        resolve({ work_proof: 'ef'.repeat(32), elapsed_seconds: elapsed });
      };
      fail = reject;
    });
    result.catch(() => {});
    return {
      result,
      stop: async () => {
        entry.stopped = true;
        fail?.(new Error('benchmark cancelled'));
      },
    };
  };
  return {
    runs,
    start: start as unknown as OwnCertificateDeps['benchmark'],
    finish: (elapsed = 2) => finish!(elapsed),
    fail: (e: Error) => fail!(e),
  };
}

function setup(over: Partial<OwnCertificateDeps> = {}, opts = {}) {
  const key = generateKeyPair();
  const seed = hexToBytes(key.seed_hex);
  const book = memoryBook();
  const bench = fakeBenchmark();
  const lines: string[] = [];
  const log = {
    info: (o: unknown, m?: string) => lines.push(typeof o === 'string' ? o : m!),
    warn: (_o: unknown, m?: string) => lines.push(`WARN ${m}`),
    debug: (_o: unknown, m?: string) => lines.push(`DEBUG ${m}`),
  };
  const attested: string[] = [];
  // The fake clock (Date) drives the node clock too.
  const now = () => T0 + BigInt(Date.now()) * 1_000_000n;
  const deps: OwnCertificateDeps = {
    key: { seed, pubKey: key.pub_key, address: key.address },
    networkId: () => NETWORK,
    workload: () => WORKLOAD,
    timekeepers: () => ({ keys: [key.pub_key], threshold: 1 }),
    maxSkewNs: () => 600_000_000_000n,
    book,
    attest: async (subject) => {
      attested.push(subject);
      return [localAttestation(subject, now(), { seed, pubKey: key.pub_key })];
    },
    now,
    sign: signBytesNode,
    verify: verifyBytesNode,
    benchmark: bench.start,
    log: log as unknown as OwnCertificateDeps['log'],
    ...over,
  };
  const own = new OwnCertificate(deps, { retryMinMs: 15_000, retryMaxMs: 300_000, ...opts });
  return { own, book, bench, lines, attested, key, now };
}

describe('the own performance certificate', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 0 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('gathers the start attestation, benchmarks, gathers the end one, and stores a certificate that verifies', async () => {
    const made: PerformanceCertificate[] = [];
    const { own, book, bench, lines, attested, key } = setup({ onCertificate: (c) => made.push(c) });
    expect(own.status).toEqual({ state: 'idle', progress: 0 });
    own.start();
    // Start-up is not held up: nothing happens until the timer runs.
    expect(attested).toEqual([]);
    await vi.advanceTimersByTimeAsync(0);
    expect(attested).toEqual([key.address]);
    expect(own.status.state).toBe('running');
    const startMedian = own.status.started_at!;
    expect(bytesToHex(bench.runs[0]!.work.seed)).toBe(bytesToHex(certificateSeed(startMedian, key.pub_key)));
    await vi.advanceTimersByTimeAsync(2000);
    bench.finish(2);
    await vi.advanceTimersByTimeAsync(0);
    expect(attested).toEqual([key.address, benchmarkEndSubject(key.address)]);

    const cert = [...book.certs.values()][0]!;
    expect(made).toEqual([cert]);
    verifyCertificateContent(cert, NETWORK, { workload: WORKLOAD, verify: verifyBytesNode });
    expect(cert.provider).toBe(key.address);
    expect(cert.score).toBe(0.5);
    expect(cert.issued_at).toBe(startMedian);
    expect(cert.start_median).toBe(startMedian);
    expect(cert.end_median).toBe(startMedian + 2_000_000_000n);
    expect(cert.expires_at).toBe(startMedian + CERTIFICATE_VALIDITY_NS);
    expect(cert.price_multiplier_milli).toBe(1000n);
    const att = (subject: string, at: bigint): Attestation =>
      localAttestation(subject, at, { seed: hexToBytes(key.seed_hex), pubKey: key.pub_key });
    expect(cert.start_attestation_root).toBe(attestationMerkleRoot([att(key.address, startMedian)]));
    expect(cert.end_attestation_root).toBe(
      attestationMerkleRoot([att(benchmarkEndSubject(key.address), cert.end_median)]),
    );
    expect(own.status).toEqual({ state: 'done', progress: 1, started_at: startMedian, elapsed_seconds: 2 });
    expect(lines.filter((l) => l.startsWith('performance benchmark'))).toEqual([
      'performance benchmark: 0%',
      'performance benchmark: 25%',
      'performance benchmark: 50%',
      'performance benchmark: 75%',
      'performance benchmark: 100%',
    ]);
    expect(lines).toContain('performance certificate made');
    await own.stop();
  });

  it('keeps a certificate made earlier, and renews it when less than a day is left', async () => {
    const { own, book, bench } = setup();
    own.start();
    await vi.advanceTimersByTimeAsync(0);
    bench.finish(1);
    await vi.advanceTimersByTimeAsync(0);
    expect(book.certs.size).toBe(1);
    await own.stop();

    // A restart with the same key and book: nothing to make.
    const again = new OwnCertificate({ ...own['d'] });
    again.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(bench.runs).toHaveLength(1);
    expect(again.status).toMatchObject({ state: 'done', progress: 1, elapsed_seconds: 1 });

    // Six days on (one day before expiry), a new one is made while the old one still stands.
    await vi.advanceTimersByTimeAsync(6 * DAY_MS - 60_000);
    expect(bench.runs).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(120_000);
    expect(bench.runs).toHaveLength(2);
    bench.finish(1);
    await vi.advanceTimersByTimeAsync(0);
    expect(book.certs.size).toBe(2);
    await again.stop();
  });

  it('makes a new certificate when the price multiplier changed', async () => {
    const { own, book, bench } = setup();
    own.start();
    await vi.advanceTimersByTimeAsync(0);
    bench.finish(1);
    await vi.advanceTimersByTimeAsync(0);
    await own.stop();
    const dearer = new OwnCertificate({ ...own['d'] }, { priceMultiplierMilli: 1500n });
    dearer.start();
    await vi.advanceTimersByTimeAsync(0);
    bench.finish(1);
    await vi.advanceTimersByTimeAsync(0);
    expect([...book.certs.values()].map((c) => c.price_multiplier_milli).sort()).toEqual([1000n, 1500n]);
    await dearer.stop();
  });

  it('retries a failure with backoff from 15 s doubling to 5 min, warning once per reason', async () => {
    const attestedAt: number[] = [];
    const { own, lines } = setup({ attest: async () => (attestedAt.push(Date.now()), []) });
    own.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(own.status.state).toBe('failed');
    expect(own.status.error).toMatch(/no timekeeper attestation/);
    for (let i = 0; i < 7; i++) await vi.advanceTimersByTimeAsync(300_000);
    const gaps = attestedAt.slice(1).map((t, i) => t - attestedAt[i]!);
    expect(gaps.slice(0, 6)).toEqual([15_000, 30_000, 60_000, 120_000, 240_000, 300_000]);
    expect(lines.filter((l) => l.startsWith('WARN'))).toHaveLength(1);
    expect(lines.filter((l) => l.startsWith('DEBUG')).length).toBeGreaterThan(4);
    await own.stop();
  });

  it('a benchmark failure is retried too, and a success resets the backoff', async () => {
    const { own, bench, book } = setup();
    own.start();
    await vi.advanceTimersByTimeAsync(0);
    bench.fail(new Error('worker crashed'));
    await vi.advanceTimersByTimeAsync(0);
    expect(own.status).toMatchObject({ state: 'failed', error: 'worker crashed' });
    await vi.advanceTimersByTimeAsync(14_999);
    expect(bench.runs).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(bench.runs).toHaveLength(2);
    bench.finish(1);
    await vi.advanceTimersByTimeAsync(0);
    expect(book.certs.size).toBe(1);
    expect(own.status.state).toBe('done');
    await own.stop();
  });

  it('says why when the network has no timekeepers', async () => {
    const { own } = setup({ timekeepers: () => undefined });
    own.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(own.status.error).toMatch(/no timekeepers/);
    await own.stop();
  });

  it('stop() during the benchmark stops its run and stores nothing', async () => {
    const { own, bench, book } = setup();
    own.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(own.status.state).toBe('running');
    await own.stop();
    expect(bench.runs[0]!.stopped).toBe(true);
    await vi.advanceTimersByTimeAsync(600_000);
    expect(book.certs.size).toBe(0);
    expect(bench.runs).toHaveLength(1);
  });

  it('refuses a price multiplier outside 500..10000', () => {
    expect(() => setup({}, { priceMultiplierMilli: 499n })).toThrow(OwnCertificateError);
    expect(() => setup({}, { priceMultiplierMilli: 10_001n })).toThrow(/outside 500\.\.10000/);
  });
});

import type { Logger } from 'pino';
import type { Attestation } from '../protocol/block.ts';
import { MAX_ATTESTATIONS } from '../protocol/block-json.ts';
import {
  attestationMerkleRoot,
  benchmarkEndSubject,
  CERTIFICATE_VALIDITY_NS,
  certificateSeed,
  MAX_PRICE_MULTIPLIER_MILLI,
  MIN_PRICE_MULTIPLIER_MILLI,
  type PerformanceCertificate,
  signCertificate,
  verifyCertificateContent,
  type Workload,
} from '../protocol/certificate.ts';
import { bytesToHex } from '../protocol/hex.ts';
import type { Verifier } from '../protocol/keys.ts';
import { attestedTime, type TimekeeperConfig } from './attestations.ts';
import { type BenchmarkRun, benchmarkWorkFor, startBenchmark } from './benchmark.ts';
import type { CertificateBook } from './certificate-book.ts';

/**
 * The node's own performance certificate (reference-behavior.md 4.7): gather the start attestation
 * on the node's address, run the benchmark in its worker thread, gather the end attestation, then
 * sign, verify and store the certificate. It runs beside the node, never in its start-up path; it is
 * renewed before it expires, and a failed attempt is retried with backoff (15 s doubling to 5 min).
 */

export type BenchmarkState = 'idle' | 'running' | 'done' | 'failed';

/** The `benchmark` object of `GET /node`. */
export interface BenchmarkStatus {
  state: BenchmarkState;
  /** Fraction of the benchmark done, 0..1. */
  progress: number;
  /** The start attestation's median (Unix ns): when the benchmark started, as the network saw it. */
  started_at?: bigint;
  /** Seconds of benchmark work: so far while running, the measured total once done. */
  elapsed_seconds?: number;
  /** Why the last attempt failed (state 'failed'; another attempt follows). */
  error?: string;
}

export type OwnCertificateErrorCode =
  | 'ERR_OWN_CERT_OPTION' // a bad option (the price multiplier)
  | 'ERR_OWN_CERT_NO_TIMEKEEPERS' // the network lists no timekeepers: nobody can attest
  | 'ERR_OWN_CERT_NO_ATTESTATIONS' // no timekeeper attested (this node is none and no peer answered)
  | 'ERR_OWN_CERT_STOPPED'; // the node stopped during an attempt

export class OwnCertificateError extends Error {
  readonly code: OwnCertificateErrorCode;
  constructor(code: OwnCertificateErrorCode, message: string) {
    super(message);
    this.name = 'OwnCertificateError';
    this.code = code;
  }
}

export interface OwnCertificateDeps {
  /** The node's key: the provider identity the certificate is made for. */
  key: { seed: Uint8Array; pubKey: string; address: string };
  networkId: () => string;
  /** The benchmark the network pins (statechain `sys.certificate_workload`). */
  workload: () => Workload;
  timekeepers: () => TimekeeperConfig | undefined;
  /** The network's max attestation skew: attestations further from now do not count. */
  maxSkewNs: () => bigint;
  book: Pick<CertificateBook, 'add' | 'newestValid'>;
  /**
   * Timekeeper attestations of `subject` at about now, from wherever this node can get them (its
   * own key when it is a timekeeper, peers when it can ask them); [] when none.
   */
  attest: (subject: string, signal: AbortSignal) => Promise<Attestation[]>;
  now: () => bigint;
  sign: (message: Uint8Array, seed: Uint8Array) => Uint8Array;
  verify: Verifier;
  /** A certificate of this node's was made and stored (to publish it). */
  onCertificate?: (cert: PerformanceCertificate) => void;
  /** The benchmark runner (tests inject a fake). */
  benchmark?: typeof startBenchmark;
  log?: Logger;
}

export interface OwnCertificateOptions {
  /** price_multiplier_milli of the certificates made (`--price-multiplier`, default 1000). */
  priceMultiplierMilli?: bigint;
  /** Renew when less than this is left before expiry (default 1 day; the spec leaves it open). */
  renewBeforeNs?: bigint;
  /** First retry delay after a failure (default 15 s), doubling up to retryMaxMs (default 5 min). */
  retryMinMs?: number;
  retryMaxMs?: number;
}

const DAY_NS = 86_400_000_000_000n;
/** setTimeout's longest delay; a longer wait wakes early and plans again. */
const MAX_TIMER_MS = 2 ** 31 - 1;
const PROGRESS_STEPS = [0.25, 0.5, 0.75];

export class OwnCertificate {
  private readonly d: OwnCertificateDeps;
  private readonly multiplier: bigint;
  private readonly renewBeforeNs: bigint;
  private readonly retryMinMs: number;
  private readonly retryMaxMs: number;
  private timer: NodeJS.Timeout | undefined;
  private attempt: Promise<void> | undefined;
  private abort: AbortController | undefined;
  private run: BenchmarkRun | undefined;
  private stopped = true;
  private failures = 0;
  private lastError = '';
  private status_: BenchmarkStatus = { state: 'idle', progress: 0 };
  /** performance.now() when the running benchmark started. */
  private benchStartedMs = 0;

  constructor(deps: OwnCertificateDeps, opts: OwnCertificateOptions = {}) {
    this.d = deps;
    this.multiplier = opts.priceMultiplierMilli ?? 1000n;
    if (this.multiplier < MIN_PRICE_MULTIPLIER_MILLI || this.multiplier > MAX_PRICE_MULTIPLIER_MILLI)
      throw new OwnCertificateError(
        'ERR_OWN_CERT_OPTION',
        `price multiplier ${this.multiplier} outside ${MIN_PRICE_MULTIPLIER_MILLI}..${MAX_PRICE_MULTIPLIER_MILLI}`,
      );
    this.renewBeforeNs = opts.renewBeforeNs ?? DAY_NS;
    this.retryMinMs = opts.retryMinMs ?? 15_000;
    this.retryMaxMs = opts.retryMaxMs ?? 300_000;
  }

  get status(): BenchmarkStatus {
    const s = this.status_;
    if (s.state !== 'running' || this.benchStartedMs === 0) return { ...s };
    return { ...s, elapsed_seconds: (performance.now() - this.benchStartedMs) / 1000 };
  }

  /** Plans the first attempt on a timer: the caller's start-up never waits for it. */
  start(): void {
    this.stopped = false;
    this.plan(0);
  }

  /** Cancels a running attempt (its benchmark worker terminated) and waits for it to end. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.abort?.abort();
    await this.run?.stop();
    await this.attempt;
  }

  private plan(ms: number): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        this.attempt = this.cycle();
      },
      Math.max(0, Math.min(ms, MAX_TIMER_MS)),
    );
    this.timer.unref();
  }

  /**
   * A certificate this node can keep offering: unexpired with more than the renewal lead left, for
   * the network's current workload and the configured multiplier (a restart with another
   * --price-multiplier makes a new one).
   */
  private held(): PerformanceCertificate | undefined {
    const now = this.d.now();
    const c = this.d.book.newestValid(this.d.key.address, now);
    const w = this.d.workload();
    if (!c || c.expires_at - now <= this.renewBeforeNs) return undefined;
    if (c.workload_version !== w.workload_version || c.iterations !== w.iterations) return undefined;
    return c.price_multiplier_milli === this.multiplier ? c : undefined;
  }

  /** Nanoseconds from now until `c` needs renewing, as a timer delay. */
  private renewalDelayMs(c: PerformanceCertificate): number {
    const ns = c.expires_at - this.renewBeforeNs - this.d.now();
    return ns <= 0n ? 0 : Number(ns / 1_000_000n) + 1;
  }

  private async cycle(): Promise<void> {
    const held = this.held();
    if (held) {
      // Made by an earlier run of this node: nothing to benchmark until it needs renewing.
      if (this.status_.state === 'idle')
        this.status_ = {
          state: 'done',
          progress: 1,
          started_at: held.start_median,
          elapsed_seconds: 1 / held.score,
        };
      this.plan(this.renewalDelayMs(held));
      return;
    }
    try {
      const cert = await this.make();
      this.failures = 0;
      this.lastError = '';
      this.plan(this.renewalDelayMs(cert));
    } catch (e) {
      this.run = undefined;
      if (this.stopped) return;
      const message = (e as Error).message;
      this.status_ = { ...this.status_, state: 'failed', error: message };
      const delay = Math.min(this.retryMaxMs, this.retryMinMs * 2 ** Math.min(this.failures, 30));
      this.failures += 1;
      // The same reason again (no timekeeper to ask, say) is not worth a warning every 5 minutes.
      const level = message === this.lastError ? 'debug' : 'warn';
      this.lastError = message;
      this.d.log?.[level](
        { err: message, code: (e as { code?: string }).code, retry_in_s: delay / 1000 },
        'performance certificate not made; will retry',
      );
      this.plan(delay);
    }
  }

  private async make(): Promise<PerformanceCertificate> {
    const { key } = this.d;
    const workload = this.d.workload();
    const networkId = this.d.networkId();
    const abort = new AbortController();
    this.abort = abort;
    this.status_ = { state: 'running', progress: 0 };
    this.benchStartedMs = 0;

    const start = await this.attested(key.address, abort.signal);
    this.status_.started_at = start.median;
    const seed = certificateSeed(start.median, key.pubKey);
    this.d.log?.info(
      {
        workload_version: workload.workload_version,
        iterations: workload.iterations,
        table_entries: workload.table_entries,
        reads: workload.reads,
      },
      'performance benchmark: 0%',
    );
    let nextStep = 0;
    this.benchStartedMs = performance.now();
    this.run = (this.d.benchmark ?? startBenchmark)(benchmarkWorkFor(workload, seed), {
      signal: abort.signal,
      onProgress: (fraction) => {
        this.status_.progress = fraction;
        while (nextStep < PROGRESS_STEPS.length && fraction >= PROGRESS_STEPS[nextStep]!) {
          this.d.log?.info(`performance benchmark: ${PROGRESS_STEPS[nextStep]! * 100}%`);
          nextStep += 1;
        }
      },
    });
    const result = await this.run.result;
    this.run = undefined;
    this.benchStartedMs = 0;
    this.status_.progress = 1;
    this.status_.elapsed_seconds = result.elapsed_seconds;
    this.d.log?.info({ elapsed_seconds: result.elapsed_seconds }, 'performance benchmark: 100%');

    const end = await this.attested(benchmarkEndSubject(key.address), abort.signal);
    // A tiny development workload can finish within the clock's resolution; the score must stay finite.
    const score = 1 / Math.max(result.elapsed_seconds, 1e-6);
    const cert = signCertificate(
      {
        provider: key.address,
        provider_pub_key: key.pubKey,
        seed: bytesToHex(seed),
        workload_version: workload.workload_version,
        iterations: workload.iterations,
        work_proof: result.work_proof,
        score,
        start_attestation_root: attestationMerkleRoot(start.attestations),
        end_attestation_root: attestationMerkleRoot(end.attestations),
        start_median: start.median,
        end_median: end.median,
        issued_at: start.median,
        expires_at: start.median + CERTIFICATE_VALIDITY_NS,
        price_multiplier_milli: this.multiplier,
      },
      networkId,
      key.seed,
      this.d.sign,
    );
    // What peers will check before they keep it: a certificate they would refuse is not offered.
    verifyCertificateContent(cert, networkId, { workload, verify: this.d.verify });
    if (this.stopped) throw new OwnCertificateError('ERR_OWN_CERT_STOPPED', 'the node stopped');
    // Done before the book has it: the book serves the certificate before its write resolves, and a
    // reader who sees the certificate must not see the benchmark still running (a failed write
    // turns this into 'failed' in cycle()).
    this.status_ = {
      state: 'done',
      progress: 1,
      started_at: start.median,
      elapsed_seconds: result.elapsed_seconds,
    };
    await this.d.book.add(cert);
    this.d.log?.info(
      { hash: cert.hash, score, expires_at: cert.expires_at, price_multiplier_milli: this.multiplier },
      'performance certificate made',
    );
    this.d.onCertificate?.(cert);
    return cert;
  }

  /** Attestations of `subject` now and their lower median, as a lease block's would be judged. */
  private async attested(
    subject: string,
    signal: AbortSignal,
  ): Promise<{ median: bigint; attestations: Attestation[] }> {
    const timekeepers = this.d.timekeepers();
    if (!timekeepers)
      throw new OwnCertificateError(
        'ERR_OWN_CERT_NO_TIMEKEEPERS',
        'the network lists no timekeepers (sys.timekeepers): nobody can attest the benchmark',
      );
    const attestations = (await this.d.attest(subject, signal)).slice(0, MAX_ATTESTATIONS);
    if (signal.aborted || this.stopped)
      throw new OwnCertificateError('ERR_OWN_CERT_STOPPED', 'the node stopped');
    if (attestations.length === 0)
      throw new OwnCertificateError(
        'ERR_OWN_CERT_NO_ATTESTATIONS',
        'no timekeeper attestation for the benchmark: this node is not a listed timekeeper and no peer attested',
      );
    const { time } = attestedTime({
      leaseHash: subject,
      attestations,
      timekeepers,
      verify: this.d.verify,
      live: { now: this.d.now(), maxSkewNs: this.d.maxSkewNs() },
    });
    return { median: time, attestations };
  }
}
